#!/usr/bin/env bash
# The scale bench (issue 19): our real control plane (tests/harness/controlplane: etcd,
# kube-apiserver, kube-controller-manager) plus kube-scheduler and KWOK (sigs.k8s.io/kwok, built by
# build.sh) with N fake nodes of 8 nvidia.com/gpu each, whose pods KWOK moves Running and then
# Succeeded/Failed on cue (stages.yaml); nccl-operator (and JobSet, bench/jobset/build.sh) as a
# process. Runs the scenarios of scale.py at 1x and 10x and writes results.jsonl, a Markdown
# table (table.md) and, with --plot, scale.png into --out.
#
#   bench/scale/run.sh [--build DIR] [--out DIR] [--nodes N] [--scenarios big,many,churn]
#                      (also big-inplace: big restarted in place, the kubelets played by the bench;
#                      big-nogang: big with the job's gangScheduling Disabled)
#                      [--sizes 0.1,1] [--controllers operator,jobset] [--churn-seconds S] [--plot]
#                      [--plan scenario:size:controller,...]   (instead of every combination, in order)
#                      [--window S]   (progress: seconds of each steady window, default 60)
#                      [--kwok-parallelism N]   (pods KWOK moves at once, default 16: the played
#                      kubelets' status writes in flight; a real cluster's kubelets write their own)
#   bench/scale/run.sh --smoke [--build DIR]    20 nodes, 2 jobs of 4 pods, operator only (CI)
#   bench/scale/run.sh --podcost "ARGS" [--nodes N]   instead of the scenarios: podcost.py ARGS
#                      (what one pod of each shape costs the cluster; see podcost.py --help)
#
# Sizes are fractions of the full scenario: big 4096 pods, many 500 jobs x 8 pods, churn
# 2 jobs/s of 8 pods (--sizes 0.1,1 is 1x and 10x); progress (not in the default --scenarios;
# operator only) one job of 4096 pods held running for --window s without, then with, pod 0's
# progress reports. Each run starts a fresh controller in a fresh namespace. kube-scheduler runs
# with client QPS 500/burst 1000 and kube-controller-manager (whose Job controller makes JobSet's
# pods) with 200/400 instead of their defaults (50/100 and 20/30), so that neither default rate
# limit is what is measured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build
out=""
nodes=1000
scenarios=big,many,churn
sizes=0.1,1
controllers=operator,jobset
churn_seconds=600
window=60
kwok_parallelism=16
plan=""
plot=0
smoke=0
podcost=""
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --scenarios) scenarios=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --controllers) controllers=$2; shift 2 ;;
    --churn-seconds) churn_seconds=$2; shift 2 ;;
    --plan) plan=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --kwok-parallelism) kwok_parallelism=$2; shift 2 ;;
    --plot) plot=1; shift ;;
    --smoke) smoke=1; shift ;;
    --podcost) podcost=$2; controllers=jobset; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
if [ "$smoke" = 1 ]; then nodes=20; controllers=operator; fi
op=$build/operator/nccl-operator
[ -x "$op" ] || { echo "run.sh: no $op: build the nccl-operator target first" >&2; exit 1; }
log() { echo "[scale $(date +%T)] $*" >&2; }

kwok_dir=$("$here/build.sh" | tail -1)
jobset_dir=""
case ",$controllers," in *,jobset,*) jobset_dir=$("$root/bench/jobset/build.sh" | tail -1) ;; esac

work=$(mktemp -d)
[ -n "$out" ] || out=$work/out
mkdir -p "$out"; out=$(cd "$out" && pwd)
cp_dir=$work/cp
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  "$root/tests/harness/controlplane/controlplane.sh" down --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# Requests are counted from the audit log (Metadata level, one line per finished request),
# without KWOK's status writes and node/lease traffic that would only make it larger.
cat >"$work/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  resources:
  - group: ""
    resources: [pods/status, nodes, nodes/status]
  - group: coordination.k8s.io
    resources: [leases]
- level: Metadata
YAML
audit=$work/audit.log
CONTROLPLANE_APISERVER_FLAGS="--audit-policy-file=$work/audit-policy.yaml --audit-log-path=$audit --audit-log-format=json --audit-log-maxsize=100000" \
CONTROLPLANE_CONTROLLER_MANAGER_FLAGS="--kube-api-qps=200 --kube-api-burst=400" \
  "$root/tests/harness/controlplane/controlplane.sh" up --dir "$cp_dir" >/dev/null
# shellcheck source=/dev/null
source "$cp_dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }

cat >"$work/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$cp_dir/kubeconfig", qps: 500, burst: 1000}
leaderElection: {leaderElect: false}
YAML
"$CONTROLPLANE_BIN/kube-scheduler" --config "$work/scheduler.yaml" --secure-port=0 >"$work/scheduler.log" 2>&1 &
pids+=($!)

{
  cat <<YAML
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  manageNodesWithAnnotationSelector: kwok.x-k8s.io/node=fake
  cidr: 10.128.0.0/9
  podPlayStageParallelism: $kwok_parallelism
  nodePlayStageParallelism: 4
  podsOnNodeSyncParallelism: 4
  nodeLeaseDurationSeconds: 0
---
YAML
  cat "$here/stages.yaml"
} >"$work/kwok.yaml"
"$kwok_dir/kwok" --v=WARN --kubeconfig "$cp_dir/kubeconfig" --config "$work/kwok.yaml" >"$work/kwok.log" 2>&1 &
kwok_pid=$!
pids+=("$kwok_pid")

wait_until() {  # wait_until <seconds> <what> <command...>
  local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || { log "timed out: $what"; return 1; }
    sleep 0.5
  done
}
ready_nodes() {
  kill -0 "$kwok_pid" 2>/dev/null || { log "kwok exited"; tail -5 "$work/kwok.log" >&2; exit 1; }
  [ "$(k get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" -ge "$nodes" ]
}
no_pods() { [ "$(k get pods -A --no-headers 2>/dev/null | wc -l)" -eq 0 ]; }

t0=$(date +%s)
python3 "$here/scale.py" nodes --controlplane "$cp_dir" --nodes "$nodes"
wait_until 300 "$nodes nodes Ready (KWOK: $work/kwok.log)" ready_nodes || { tail -20 "$work/kwok.log" >&2; exit 1; }
log "$nodes fake nodes Ready in $(( $(date +%s) - t0 )) s"
k apply --server-side --force-conflicts -f "$root/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
crds=(crd/nccljobs.nccl.dev)
if [ -n "$jobset_dir" ]; then
  k apply --server-side -f "$jobset_dir/crds/" >/dev/null
  crds+=(crd/jobsets.jobset.x-k8s.io)
fi
# kubectl wait fails at once ("accessor error") on a CRD the API server has not given
# conditions yet: asked again until the deadline.
established() { k wait --for=condition=Established "${crds[@]}" --timeout=10s >/dev/null 2>&1; }
wait_until 60 "CRDs Established" established

results=$out/results.jsonl
common=(--controlplane "$cp_dir" --operator "$op" --audit "$audit" --out "$results")
[ -n "$jobset_dir" ] && common+=(--jobset-dir "$jobset_dir")
diagnose() {
  log "pods:"; k get pods -A -o wide 2>&1 | head -10 >&2
  log "a pod's status:"; k get pods -A -o jsonpath='{.items[0].status}' >&2 2>&1 || true; echo >&2
  log "kube-scheduler:"; tail -5 "$work/scheduler.log" >&2
  log "kwok:"; tail -5 "$work/kwok.log" >&2
}
if [ "$smoke" = 1 ]; then
  python3 "$here/scale.py" many "${common[@]}" --controller operator --jobs 2 --replicas 4 --timeout 60 >/dev/null \
    || { diagnose; exit 1; }
  python3 "$here/table.py" "$results"
  log "smoke passed"
  exit 0
fi

# CPU seconds of each part of the cluster, to see who is the bottleneck of a run.
cpu_of() { awk -v t="$(getconf CLK_TCK)" '{print ($14+$15)/t}' "/proc/$1/stat" 2>/dev/null || echo 0; }
parts=(apiserver etcd controller-manager)
part_pids=("$(cat "$cp_dir/apiserver.pid")" "$(cat "$cp_dir/etcd.pid")" "$(cat "$cp_dir/controller-manager.pid")")
parts+=(scheduler kwok); part_pids+=("${pids[0]}" "$kwok_pid")
# scale.py takes the same CPU seconds per phase.
SCALE_PARTS=$(for i in "${!parts[@]}"; do printf '%s=%s,' "${parts[$i]}" "${part_pids[$i]}"; done)
export SCALE_PARTS
if [ -n "$podcost" ]; then
  # shellcheck disable=SC2086  # ARGS are podcost.py's flags, split on purpose
  python3 "$here/podcost.py" --controlplane "$cp_dir" --operator "$op" --jobset-dir "$jobset_dir" $podcost \
    | tee "$out/podcost.md"
  log "results in $out"
  exit 0
fi
cpu_snapshot() { local p; for p in "${part_pids[@]}"; do cpu_of "$p"; done | paste -sd' '; }
cpu_report() {  # cpu_report <label> <snapshot before>
  local before=($2) after=($(cpu_snapshot)) i line="$1: CPU s of the cluster's parts:"
  for i in "${!parts[@]}"; do line+=" ${parts[$i]} $(echo "${after[$i]} - ${before[$i]}" | bc)"; done
  log "$line"; echo "$line" >>"$out/cluster-cpu.log"
}

# The runs, in order: scenario:size:controller, from --plan or every combination.
if [ -z "$plan" ]; then
  IFS=, read -r -a size_list <<<"$sizes"
  IFS=, read -r -a scenario_list <<<"$scenarios"
  IFS=, read -r -a controller_list <<<"$controllers"
  for s in "${size_list[@]}"; do for sc in "${scenario_list[@]}"; do for c in "${controller_list[@]}"; do
    [ "$sc:$c" = progress:jobset ] && continue  # status.progress is the NcclJob's
    [ "$sc:$c" = big-inplace:jobset ] && continue  # the NcclJob's restart in place
    [ "$sc:$c" = big-nogang:jobset ] && continue  # the NcclJob's gangScheduling
    plan+="${plan:+,}$sc:$s:$c"
  done; done; done
fi
IFS=, read -r -a runs <<<"$plan"
for one in "${runs[@]}"; do
  IFS=: read -r sc s c <<<"$one"
  case "$sc" in
    big|big-inplace|big-nogang) args=(--pods "$(python3 -c "print(round(4096 * $s))")") ;;
    many) args=(--jobs "$(python3 -c "print(max(1, round(500 * $s)))")" --replicas 8) ;;
    churn) args=(--rate "$(python3 -c "print(2 * $s)")" --replicas 8 --seconds "$churn_seconds" --run-for 20) ;;
    progress) args=(--pods "$(python3 -c "print(round(4096 * $s))")" --window "$window") ;;
    *) echo "run.sh: unknown scenario $sc" >&2; exit 2 ;;
  esac
  log "$sc x$s: $c ${args[*]}"
  snap=$(cpu_snapshot)
  if ! python3 "$here/scale.py" "$sc" "${common[@]}" --controller "$c" "${args[@]}" --size "$s" >/dev/null; then
    log "$sc x$s: $c did not finish (recorded as missing)"
  fi
  cpu_report "$sc x$s $c" "$snap"
  wait_until 600 "the last run's pods gone" no_pods
done
python3 "$here/table.py" "$results" | tee "$out/table.md"
if [ "$plot" = 1 ]; then
  "$here/plot.sh" "$results" "$out/scale.png"
fi
log "results in $out"
