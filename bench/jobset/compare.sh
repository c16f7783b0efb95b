#!/usr/bin/env bash
# nccl-operator vs the JobSet controller on the same local control plane (etcd, kube-apiserver,
# kube-controller-manager with the Job controller; no node, so pods never run: "all pods exist"
# is the finish line for both). For each controller in turn, in a fresh namespace:
#   1. start it, wait until it is ready;
#   2. create M workloads of R pods; time until all M*R pods exist; the controller's peak RSS
#      and CPU seconds; API requests from the apiserver's audit log (by user agent) per workload;
#   3. restart: mark pod 0 of every workload Failed (as an admin, like a kubelet would) and time
#      until all M*R pods of the next attempt exist; API writes of that restart per workload;
#   4. objects per workload.
# JobSet's pods are created by the Job controller inside kube-controller-manager: its requests
# (user system:serviceaccount:kube-system:job-controller) are counted in their own column.
# Usage: bench/jobset/compare.sh [--build DIR] [--workloads M] [--replicas R] [--only operator|jobset]
# Needs bench/jobset/build.sh (run by this script) and the nccl-operator target built.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
M=100
R=8
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --workloads) M=$2; shift 2 ;;
    --replicas) R=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--workloads M] [--replicas R] [--only operator|jobset]" >&2; exit 2 ;;
  esac
done
op=$build/operator/nccl-operator
[ -x "$op" ] || { echo "no $op: build the nccl-operator target first" >&2; exit 1; }
jobset_dir=$("$root/bench/jobset/build.sh" | tail -1)

work=$(mktemp -d)
audit=$work/audit.log
cat >"$work/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
YAML
cp_dir=$work/cp
CONTROLPLANE_APISERVER_FLAGS="--audit-policy-file=$work/audit-policy.yaml --audit-log-path=$audit --audit-log-format=json --audit-log-maxsize=0" \
  "$root/tests/harness/controlplane/controlplane.sh" up --dir "$cp_dir" >/dev/null
# shellcheck source=/dev/null
source "$cp_dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  "$root/tests/harness/controlplane/controlplane.sh" down --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

k apply --server-side --force-conflicts -f "$root/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
k apply --server-side -f "$jobset_dir/crds/" >/dev/null
# Asked again while a just-made CRD has no status conditions (kubectl wait errs then), for a minute.
for _ in $(seq 120); do k wait --for=condition=Established crd/nccljobs.nccl.dev crd/jobsets.jobset.x-k8s.io --timeout=60s >/dev/null 2>&1 && break; sleep 0.5; done
k wait --for=condition=Established crd/nccljobs.nccl.dev crd/jobsets.jobset.x-k8s.io --timeout=1s >/dev/null

wait_until() {  # wait_until <seconds> <command...>
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.2; done
}
now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_seconds() { awk -v t="$(getconf CLK_TCK)" '{print ($14+$15)/t}' "/proc/$1/stat"; }
peak_mib() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
audit_lines() { wc -l <"$audit"; }
# Requests in audit lines (from+1 .. end) in namespace $ns: "<ua-class> <verb>" counts as JSON.
count_requests() {  # count_requests <from-line> <namespace>
  tail -n +"$(( $1 + 1 ))" "$audit" | python3 -c '
import json, sys, collections
ns = sys.argv[1]
c = collections.Counter()
for line in sys.stdin:
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("stage") != "ResponseComplete": continue
    ref = e.get("objectRef") or {}
    if ref.get("namespace") != ns: continue
    ua = e.get("userAgent", "")
    user = e.get("user", {}).get("username", "")
    who = ("operator" if ua.startswith("nccl-operator") else "jobset" if ua.startswith("jobset") else
           "jobctl" if user.endswith(":job-controller") else "other")
    c[who + " " + e.get("verb", "?")] += 1
print(json.dumps(c))' "$2"
}
writes_of() {  # writes_of <json> <who>
  python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(sum(v for k,v in c.items() if k.split()[0]==sys.argv[2] and k.split()[1] in ("create","update","patch","delete","deletecollection")))' "$1" "$2"
}
all_of() {
  python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(sum(v for k,v in c.items() if k.split()[0]==sys.argv[2]))' "$1" "$2"
}
# Waits until audit lines stop growing for 2 s (the controllers finished their status writes).
quiet() {
  local last n stable=0 deadline=$(( $(date +%s) + 60 ))
  last=$(audit_lines)
  while [ "$stable" -lt 10 ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.2; n=$(audit_lines)
    if [ "$n" = "$last" ]; then stable=$((stable + 1)); else stable=0; last=$n; fi
  done
}

operator_manifests() {
  for i in $(seq 0 $((M - 1))); do cat <<YAML
---
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: job-$i}
spec:
  replicas: $R
  gpusPerPod: 8
  failurePolicy: {maxRestarts: 3, backoffSeconds: 0}
  template:
    spec:
      containers:
      - name: trainer
        image: trainer:1
        command: ["python", "-m", "train", "--config", "/etc/train/config.yaml"]
YAML
  done
}
# The same workload as a JobSet: one Indexed Job of R pods, a headless Service, restart on
# failure. Fields its (absent) defaulting webhook would fill are set explicitly.
jobset_manifests() {
  for i in $(seq 0 $((M - 1))); do cat <<YAML
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: job-$i}
spec:
  network: {enableDNSHostnames: true, publishNotReadyAddresses: true}
  successPolicy: {operator: All}
  startupPolicy: {startupPolicyOrder: AnyOrder}
  failurePolicy: {maxRestarts: 3, restartStrategy: Recreate}
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: $R
        completions: $R
        completionMode: Indexed
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: trainer
              image: trainer:1
              command: ["python", "-m", "train", "--config", "/etc/train/config.yaml"]
              resources: {limits: {nvidia.com/gpu: 8}}
YAML
  done
}

start_operator() {
  "$op" --kubeconfig "$cp_dir/kubeconfig" --namespace "$ns" --metrics-bind-address=0 \
    --health-probe-bind-address=127.0.0.1:0 --log-level=info >"$work/$1.log" 2>&1 &
  pid=$!
  wait_until 60 grep -q "caches synced" "$work/$1.log"
}
start_jobset() {
  local certs=$work/certs
  mkdir -p "$certs"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout "$certs/tls.key" \
    -out "$certs/tls.crt" >/dev/null 2>&1
  local health; health=$(free_port)
  # No webhooks are registered with the API server (like the operator, it has none); the
  # manager still serves them, so it gets a self-signed cert on a free port.
  cat >"$work/jobset-config.yaml" <<YAML
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $(free_port), host: 127.0.0.1, certDir: $certs}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$health"}
YAML
  KUBECONFIG=$cp_dir/kubeconfig "$jobset_dir/jobset-manager" --config "$work/jobset-config.yaml" >"$work/$1.log" 2>&1 &
  pid=$!
  wait_until 60 curl -sf "http://127.0.0.1:$health/readyz" -o /dev/null
}

declare -A res
run() {  # run operator|jobset
  local who=$1 selector attempt_label
  ns=bench-$who-$$
  k create namespace "$ns" >/dev/null
  if [ "$who" = operator ]; then selector=nccl.dev/job-name; start_operator "$who"
  else selector=jobset.sigs.k8s.io/jobset-name; start_jobset "$who"; fi
  local want=$((M * R))
  count_pods() { [ "$(k get pods -n "$ns" -l "$1" --no-headers 2>/dev/null | wc -l)" -ge "$want" ]; }

  local cpu0 line0 t0 t1
  cpu0=$(cpu_seconds "$pid"); line0=$(audit_lines); t0=$(now)
  "${who}_manifests" | k apply -n "$ns" -f - >/dev/null
  wait_until 900 count_pods "$selector" || { echo "$who: pods did not all appear" >&2; tail -20 "$work/$who.log" >&2; exit 1; }
  t1=$(now)
  quiet
  local created; created=$(count_requests "$line0" "$ns")
  res[$who,create_s]=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
  res[$who,cpu_create]=$(printf '%.2f' "$(echo "$(cpu_seconds "$pid") - $cpu0" | bc)")
  res[$who,req]=$(echo "scale=1; $(all_of "$created" "$who") / $M" | bc)
  res[$who,writes]=$(echo "scale=1; $(writes_of "$created" "$who") / $M" | bc)
  res[$who,jobctl_writes]=$(echo "scale=1; $(writes_of "$created" jobctl) / $M" | bc)
  res[$who,objects]=$(echo "scale=1; $(k get pods,jobs,services,configmaps,serviceaccounts,roles,rolebindings,endpointslices -n "$ns" \
      --no-headers 2>/dev/null | grep -v -e kube-root-ca.crt -e '^serviceaccount/default' | wc -l) / $M" | bc)
  res[$who,detail]=$created

  # Restart: pod 0 of every workload fails.
  if [ "$who" = operator ]; then attempt_label="nccl.dev/attempt=2"; else attempt_label="jobset.sigs.k8s.io/restart-attempt=1"; fi
  line0=$(audit_lines); t0=$(now); cpu0=$(cpu_seconds "$pid")
  local pods; pods=$(k get pods -n "$ns" -l "$selector" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.labels}{"\n"}{end}' |
    awk '/"nccl.dev\/index":"0"|"batch.kubernetes.io\/job-completion-index":"0"/ {print $1}')
  for p in $pods; do
    k patch pod "$p" -n "$ns" --subresource=status --type=merge \
      -p '{"status":{"phase":"Failed","reason":"Bench","message":"failed on purpose"}}' >/dev/null
  done
  wait_until 900 count_pods "$selector,$attempt_label" || { echo "$who: restart did not complete" >&2; tail -20 "$work/$who.log" >&2; exit 1; }
  t1=$(now)
  quiet
  local restarted; restarted=$(count_requests "$line0" "$ns")
  res[$who,restart_s]=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)")
  res[$who,restart_writes]=$(echo "scale=1; $(writes_of "$restarted" "$who") / $M" | bc)
  res[$who,restart_jobctl]=$(echo "scale=1; $(writes_of "$restarted" jobctl) / $M" | bc)
  res[$who,cpu]=$(printf '%.2f' "$(echo "$(cpu_seconds "$pid") - $cpu0 + ${res[$who,cpu_create]}" | bc)")
  res[$who,rss]=$(peak_mib "$pid")
  res[$who,rdetail]=$restarted
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  k delete namespace "$ns" --wait=false >/dev/null
}

whos=(operator jobset)
[ -n "$only" ] && whos=("$only")
for w in "${whos[@]}"; do run "$w"; done

printf '\n%d workloads x %d pods, local control plane (no node), %s\n' "$M" "$R" "$(date -u +%FT%TZ)"
printf '%-48s' "measure"; for w in "${whos[@]}"; do printf '%16s' "$w"; done; echo
row() { printf '%-48s' "$1"; for w in "${whos[@]}"; do printf '%16s' "${res[$w,$2]}"; done; echo; }
row "time until all pods exist (s)" create_s
row "controller peak RSS (MiB)" rss
row "controller CPU, create + restart (s)" cpu
row "controller CPU, create only (s)" cpu_create
row "API requests / workload (controller, create)" req
row "API writes / workload (controller, create)" writes
row "  + Job controller writes / workload" jobctl_writes
row "time until restarted pods exist (s)" restart_s
row "API writes / restart (controller)" restart_writes
row "  + Job controller writes / restart" restart_jobctl
row "objects / workload" objects
echo
for w in "${whos[@]}"; do echo "$w requests during create (by client, verb): ${res[$w,detail]}"; echo "$w requests during restart: ${res[$w,rdetail]}"; done
