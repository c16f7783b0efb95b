#!/usr/bin/env bash
# The real-node tier: a real kubelet with containerd and runc, kube-scheduler, kube-proxy and
# CoreDNS (tests/harness/realnode/realnode.sh) run the images built from deploy/docker/Dockerfile
# (tests/harness/images/build.sh, pulled from its loopback registry): the operator installed by the
# README's `helm install`, NcclJobs in real containers.
#   - the operator, the injected sidecar and the trainers run the registry's images (the digest in
#     the kubelet's imageID is the registry's);
#   - the example job (deploy/examples/ncclJob.yaml) reaches Succeeded; kubectl logs of a trainer
#     and a sidecar; the sidecar started before the trainer and stopped after it; a pod resolves
#     MASTER_ADDR to pod 0's IP through cluster DNS;
#   - the operator and the sidecars run as non-root with a read-only root filesystem (read from
#     their processes on the node);
#   - a trainer killed with SIGKILL: attempt 2 restarted in place (restartStrategy Auto on a node that
#     declares the kubelet's feature): the same pods (UIDs), every container restarted once, an
#     emptyDir kept, no pod made or deleted, a fresh id, then Succeeded; a pod deleted by hand is made
#     again while the others restart in place (no gang); exit code 2 in
#     failFastExitCodes: Failed without a restart; deleting a job removes its pods, children and
#     containers;
#   - devices through Dynamic Resource Allocation (dra.sh): an NcclJob whose template claims one
#     device per pod from a ResourceClaimTemplate of the node's DRA driver: each pod's claim
#     allocated and reserved for it, the trainer sees the device's CDI env, Succeeded, claims gone;
#   - what a user sees when the cluster says no: an image that does not exist, a command that
#     does not exist, a pod that asks more CPU than the node has: kubectl get nj (Reason) and
#     kubectl describe nj name the pod and the cluster's reason within seconds.
# Needs root (skips with 77 otherwise). Env: NCCLOP_BUILD_DIR (default build/); NCCLOP_IMAGES_DIR:
# a running images fixture (CTest's images.up), else tests/harness/images/build.sh up runs here.
# One real node per machine: a second run waits for the first (lib.sh rn_node_up).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${NCCLOP_BUILD_DIR:-$root/build}
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (a real kubelet, containerd, interfaces)"; exit 77; }
dir="$build/realnode"
t0=$(date +%s)
# shellcheck source=lib.sh
source "$here/lib.sh"
# REALNODE_KEEP=1 leaves the node up for a look (then: realnode.sh down --dir build/realnode).
cleanup() {
  [ "${REALNODE_KEEP:-0}" = 1 ] && return
  "$root/tests/harness/realnode/realnode.sh" down --dir "$dir" || true
  rn_images_down
}
trap cleanup EXIT
rn_images_up "$build/realnode-images"
t_images=$(date +%s)
rn_node_up "$dir"
# shellcheck source=/dev/null
source "$dir/env"
export PATH="$CONTROLPLANE_BIN:$PATH"
export HELM_CACHE_HOME="$dir/helm/cache" HELM_CONFIG_HOME="$dir/helm/config" HELM_DATA_HOME="$dir/helm/data"
t_node=$(date +%s)

failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
check() {  # check <description> <command...>
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
wait_until() { local d=$(( $(date +%s) + $1 )); shift; until "$@"; do [ "$(date +%s)" -lt $d ] || return 1; sleep 0.3; done; }

echo "images: $OPERATOR_IMAGE, $SIDECAR_IMAGE, $TRAINER_IMAGE"
rn_helm_install
t_operator=$(date +%s)
pass "helm install (the README's command): operator rolled out on the real node ($((t_operator - t_node))s)"
# The chart's own test (its README tells users to run it): a pod of the operator image asks the
# metrics Service, through kube-proxy and CoreDNS, on the real node.
if helm_test_out=$(helm test nccl-operator -n nccl-system --timeout 120s 2>&1); then
  pass "helm test nccl-operator: $(grep -m1 -o 'Phase: *[A-Za-z]*' <<<"$helm_test_out" | tr -s ' ')"
else
  fail "helm test nccl-operator: $helm_test_out $(kubectl -n nccl-system logs nccl-operator-test 2>&1 | tail -5)"
fi
# runs_image <what> <namespace> <pod> <container> <image>: the container runs that image as the
# registry serves it: the digest in the kubelet's imageID is the registry's for the reference.
# (Its `image` names one of the image's tags on the node: an image of the same content pulled
# earlier under another name, e.g. another build's prefix, may be the one named.)
runs_image() {
  local got want
  got=$(kubectl -n "$2" get pod "$3" -o jsonpath="{.status.containerStatuses[?(@.name==\"$4\")].imageID}{.status.initContainerStatuses[?(@.name==\"$4\")].imageID}")
  want=$(registry_digest "$5")
  check "$1 runs $5 (kubelet's imageID $got, registry's digest $want)" test -n "$want" -a "${got##*@}" = "$want"
}
registry_digest() {  # registry_digest <REGISTRY/repo:tag>
  local ref=${1#"$REGISTRY"/}
  curl -sfI -H 'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json' \
    "http://$REGISTRY/v2/${ref%:*}/manifests/${ref##*:}" | tr -d '\r' | awk 'tolower($1) == "docker-content-digest:" {print $2}'
}
runs_image "the operator" nccl-system "$(kubectl -n nccl-system get pods -o jsonpath='{.items[0].metadata.name}')" operator "$OPERATOR_IMAGE"

# ---- the example job ------------------------------------------------------------------------
ns=rn-example
kubectl create namespace "$ns" >/dev/null
# containerd's content stays in build/realnode between runs: the first run on a machine pulls
# the trainer image (about 240 MB), a later one finds its layers there.
if [ -n "$($REALNODE_CTR images ls -q "name==$TRAINER_IMAGE" 2>/dev/null)" ]; then pulled="trainer image on the node"; else pulled="trainer image pulled first"; fi
applied=$(date +%s.%N)
rn_example_job | kubectl -n "$ns" apply -f - >/dev/null
echo "time from kubectl apply to all 4 trainers started: $(rn_seconds_to_trainers "$ns" demo 4 "$applied" 180)s ($pulled)"
check "example job Succeeded" rn_wait 120 "$ns" nccljob/demo '{.status.state}' Succeeded
runs_image "demo-0's trainer" "$ns" demo-0 trainer "$TRAINER_IMAGE"
runs_image "demo-0's injected sidecar" "$ns" demo-0 nccl-sidecar "$SIDECAR_IMAGE"
log0=$(kubectl -n "$ns" logs demo-0 -c trainer)
check "kubectl logs demo-0 -c trainer: rank 0 got the id of attempt 1 ($log0)" \
  grep -q "rank 0 of 4 pods, attempt 1" <<<"$log0"
sidecar_log=$(kubectl -n "$ns" logs demo-3 -c nccl-sidecar)
check "kubectl logs demo-3 -c nccl-sidecar is the sidecar's ($(wc -l <<<"$sidecar_log") lines)" test -n "$sidecar_log"
# The job is done when its trainers are; the kubelet stops the sidecars a moment later.
check "the kubelet stopped demo-1's sidecar after its trainer: pod Succeeded" rn_wait 30 "$ns" pod/demo-1 '{.status.phase}' Succeeded
order=$(kubectl -n "$ns" get pod demo-1 -o jsonpath='{.status.initContainerStatuses[0].state.terminated.startedAt} {.status.containerStatuses[0].state.terminated.startedAt} {.status.containerStatuses[0].state.terminated.finishedAt} {.status.initContainerStatuses[0].state.terminated.finishedAt}')
read -r side_start train_start train_end side_end <<<"$order"
check "native sidecar: started before the trainer, stopped after it ($order)" \
  test -n "$side_end" -a ! "$side_start" \> "$train_start" -a ! "$train_end" \> "$side_end"
check "the sidecar exited 0 on the kubelet's SIGTERM" \
  test "$(kubectl -n "$ns" get pod demo-1 -o jsonpath='{.status.initContainerStatuses[0].state.terminated.exitCode}')" = 0

# ---- non-root, read-only root filesystem (from the processes on the node) --------------------
pid_of() {  # pid_of <namespace> <pod> <container>: the container's first process on the node
  local id
  id=$(kubectl -n "$1" get pod "$2" -o jsonpath="{.status.containerStatuses[?(@.name==\"$3\")].containerID}{.status.initContainerStatuses[?(@.name==\"$3\")].containerID}")
  $REALNODE_CTR tasks ls 2>/dev/null | awk -v id="${id#containerd://}" '$1 == id {print $2}'
}
confined() {  # confined <pid>: uid not 0 and / mounted read-only
  local pid=$1
  [ -n "$pid" ] || return 1
  local uid; uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
  local root_opts; root_opts=$(awk '$5 == "/" {print $6; exit}' "/proc/$pid/mountinfo")
  echo "     pid $pid uid $uid root mount $root_opts, RSS $(awk '/^VmRSS:/ {print $2 " " $3}' "/proc/$pid/status")"
  [ "$uid" != 0 ] && [[ "$root_opts" == ro,* || "$root_opts" == ro ]]
}
op_pod=$(kubectl -n nccl-system get pods -o jsonpath='{.items[0].metadata.name}')
check "operator container: non-root, read-only root filesystem" confined "$(pid_of nccl-system "$op_pod" operator)"

# ---- SIGKILL of a trainer: attempt 2 in place, fresh id, Succeeded; MASTER_ADDR resolves ---------
ns=rn-kill
kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: kill}
spec:
  replicas: 2
  gpusPerPod: 0
  failurePolicy: {maxRestarts: 3, backoffSeconds: 1}
  template:
    spec:
      securityContext: {runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532}
      volumes: [{name: scratch, emptyDir: {}}]
      containers:
        - name: trainer
          image: $TRAINER_IMAGE
          securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false}
          resources: {requests: {cpu: 50m}}
          volumeMounts: [{name: scratch, mountPath: /scratch}]
          # Pod 0's name is in DNS once the endpoint controllers saw its IP: a moment after it starts.
          # The first start of each pod of attempt 1 trains for long; a restart in place (/scratch is
          # kept) or a pod made again for attempt 2 ends at once.
          command: [sh, -c, 'n=0; until getent hosts "\$MASTER_ADDR"; do n=\$((n+1)); [ \$n -ge 120 ] && break; sleep 0.5; done; if [ -e /scratch/started ] || [ "\$NCCLJOB_ATTEMPT" != 1 ]; then exec nccl-allreduce; else touch /scratch/started; exec nccl-allreduce --linger-seconds 600; fi']
YAML
check "kill: attempt 1 running" rn_wait 60 "$ns" nccljob/kill '{.status.state}/{.status.attempt}' Running/1
wait_log() { local d=$(( $(date +%s) + 30 )); until kubectl -n "$ns" logs "$1" -c trainer 2>/dev/null | grep -q "$2"; do [ "$(date +%s)" -lt $d ] || return 1; sleep 0.3; done; }
check "kill: kill-1's trainer got the id" wait_log kill-1 "id obtained"
id1=$(kubectl -n "$ns" get configmap kill-nccl -o jsonpath='{.data.attempt}/{.data.uniqueId}')
ip0=$(kubectl -n "$ns" get pod kill-0 -o jsonpath='{.status.podIP}')
# getent's answer (on stdout) once pod 0's name is in DNS (it retries up to 60 s); the runtime's
# log lines (stderr) may come before it in the container's log, which interleaves the two streams.
deadline=$((SECONDS + 75))
until resolved=$(kubectl -n "$ns" logs kill-1 -c trainer 2>/dev/null | grep -m1 -E "^[0-9a-f.:]+ +kill-0\.kill\.$ns\.svc") \
      && [[ "$resolved" == *"kill-0.kill.$ns.svc"* ]] \
      || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.5; done
check "MASTER_ADDR (kill-0.kill.$ns.svc) resolves to pod kill-0's IP $ip0 in pod kill-1 ($resolved)" \
  test "$(awk '{print $1}' <<<"$resolved")" = "$ip0"
check "sidecar container: non-root, read-only root filesystem" confined "$(pid_of "$ns" kill-1 nccl-sidecar)"
check "trainer container (template asks it): non-root, read-only root filesystem" confined "$(pid_of "$ns" kill-1 trainer)"
# Kubernetes 1.36+: the kubelet declares RestartAllContainersOnContainerExits and Auto restarts in
# place; 1.35's does not (the feature is alpha there) and Auto recreates the pods.
strategy=$(kubectl -n "$ns" get nccljob kill -o jsonpath='{.status.restartStrategy}')
if [ "$(kubectl get node -o jsonpath='{.items[0].status.declaredFeatures}' | grep -c RestartAllContainersOnContainerExits)" = 1 ]; then
  check "kill: attempt 1 restarts in place (status.restartStrategy $strategy)" test "$strategy" = InPlace
else
  check "kill: the node declares no restart in place: attempt 1 recreates (status.restartStrategy $strategy)" test "$strategy" = Recreate
fi
uids1=$(kubectl -n "$ns" get pods -l nccl.dev/job-name=kill -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')
victim=$(pid_of "$ns" kill-1 trainer)
kill -9 "$victim"
check "kill: SIGKILL of kill-1's trainer (pid $victim) starts attempt 2" rn_wait 60 "$ns" nccljob/kill '{.status.attempt}' 2
check "kill: attempt 2 Succeeded" rn_wait 90 "$ns" nccljob/kill '{.status.state}' Succeeded
id2=$(kubectl -n "$ns" get configmap kill-nccl -o jsonpath='{.data.attempt}/{.data.uniqueId}')
check "kill: attempt 2 has a fresh id (ConfigMap kill-nccl: attempt ${id1%%/*}, then ${id2%%/*}, ids differ)" \
  test "${id1%%/*}" = 1 -a "${id2%%/*}" = 2 -a "${id1#*/}" != "${id2#*/}" -a -n "${id1#*/}" -a -n "${id2#*/}"
check "kill: the restart says exit code 137" bash -c "kubectl -n $ns get events --field-selector reason=Restarting -o jsonpath='{.items[*].message}' | grep -q 'code 137'"
uids2=$(kubectl -n "$ns" get pods -l nccl.dev/job-name=kill -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}')
if [ "$strategy" = InPlace ]; then
  check "kill: attempt 2 ran on the same pods, in place ($uids2)" test "$uids1" = "$uids2"
  counts=$(kubectl -n "$ns" get pods -l nccl.dev/job-name=kill -o jsonpath='{range .items[*]}{.status.initContainerStatuses[0].restartCount}{.status.containerStatuses[0].restartCount} {end}')
  check "kill: every container (sidecar, trainer) of both pods restarted once ($counts)" test "$counts" = "11 11 "
  check "kill: the pods now say attempt 2" test "$(kubectl -n "$ns" get pods -l nccl.dev/job-name=kill,nccl.dev/attempt=2 -o name | wc -l)" = 2
  check "kill: the restarted trainers logged attempt 2" bash -c "kubectl -n $ns logs kill-0 -c trainer | grep -q 'attempt 2, .*obtained' && kubectl -n $ns logs kill-1 -c trainer | grep -q 'attempt 2, .*obtained'"
  check "kill: no pod was made for the restart (2 Scheduled events)" \
    test "$(kubectl -n "$ns" get events --field-selector reason=Scheduled -o name | wc -l)" = 2
else
  check "kill: attempt 2 ran on new pods (recreated: $uids2)" test -z "$(comm -12 <(tr ' ' '\n' <<<"$uids1" | sort) <(tr ' ' '\n' <<<"$uids2" | sort) | grep .)"
fi

# ---- a pod deleted by hand is made again; the other restarts in place -----------------------------
if [ "$strategy" = InPlace ]; then
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: gone}
spec:
  replicas: 2
  gpusPerPod: 0
  gangScheduling: Disabled  # a gang makes every pod again when one must be
  failurePolicy: {maxRestarts: 3, backoffSeconds: 1}
  template:
    spec:
      volumes: [{name: scratch, emptyDir: {}}]
      containers:
        - name: trainer
          image: $TRAINER_IMAGE
          resources: {requests: {cpu: 50m}}
          volumeMounts: [{name: scratch, mountPath: /scratch}]
          command: [sh, -c, 'if [ -e /scratch/started ] || [ "\$NCCLJOB_ATTEMPT" != 1 ]; then exec nccl-allreduce; else touch /scratch/started; exec nccl-allreduce --linger-seconds 600; fi']
YAML
check "gone: attempt 1 running" rn_wait 60 "$ns" nccljob/gone '{.status.state}/{.status.attempt}' Running/1
check "gone: gone-1's trainer got the id" wait_log gone-1 "obtained"
uid0=$(kubectl -n "$ns" get pod gone-0 -o jsonpath='{.metadata.uid}')
uid1=$(kubectl -n "$ns" get pod gone-1 -o jsonpath='{.metadata.uid}')
kubectl -n "$ns" delete pod gone-1 --wait=false >/dev/null
check "gone: deleting pod gone-1 starts attempt 2" rn_wait 60 "$ns" nccljob/gone '{.status.attempt}' 2
check "gone: attempt 2 Succeeded" rn_wait 90 "$ns" nccljob/gone '{.status.state}' Succeeded
got0=$(kubectl -n "$ns" get pod gone-0 -o jsonpath='{.metadata.uid}/{.status.containerStatuses[0].restartCount}')
check "gone: gone-0 restarted in place (same UID, restart count 1: $got0)" test "$got0" = "$uid0/1"
new1=$(kubectl -n "$ns" get pod gone-1 -o jsonpath='{.metadata.uid}')
check "gone: gone-1 was made again (a new UID)" test -n "$new1" -a "$new1" != "$uid1"
kubectl -n "$ns" delete nccljob gone --wait=false >/dev/null
else
  pass "gone: skipped (the node restarts nothing in place)"
fi

# ---- delete cleans up ---------------------------------------------------------------------------
kubectl -n "$ns" delete nccljob kill --wait=false >/dev/null
gone() { [ -z "$(kubectl -n "$ns" get pods,services,configmaps,serviceaccounts,roles,rolebindings -l nccl.dev/job-name=kill -o name 2>/dev/null)" ]; }
# Exited containers stay in containerd until the kubelet's container GC; none may still run.
running_in_ns() {
  local ids; ids=$($REALNODE_CTR containers ls -q "labels.\"io.kubernetes.pod.namespace\"==$ns" 2>/dev/null)
  $REALNODE_CTR tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING" {print $1}' | grep -Fxf <(echo "$ids") -q
}
check "delete: pods, Service, ConfigMap, RBAC of the job are gone" wait_until 60 gone
check "delete: no container of the job runs on the node any more" wait_until 30 eval '! running_in_ns' 

# ---- fail-fast ------------------------------------------------------------------------------------
ns=rn-failfast
kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: ff}
spec:
  replicas: 2
  gpusPerPod: 0
  failurePolicy: {maxRestarts: 3, backoffSeconds: 1, failFastExitCodes: [2]}
  template:
    spec:
      containers:
        - {name: trainer, image: $TRAINER_IMAGE, command: [nccl-allreduce, --no-such-flag], resources: {requests: {cpu: 50m}}}
YAML
check "fail-fast: exit code 2 fails the job without a restart" rn_wait 60 "$ns" nccljob/ff \
  '{.status.state}/{.status.restarts}/{.status.conditions[?(@.type=="Failed")].reason}' Failed/0/FailFastExitCode

# ---- devices through Dynamic Resource Allocation ---------------------------------------------------
# shellcheck source=dra.sh
source "$here/dra.sh"

# ---- what a user sees when the cluster says no ----------------------------------------------------
ns=rn-no
kubectl create namespace "$ns" >/dev/null
no_job() {  # no_job <name> <trainer container fields as flow YAML>
  kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1}
spec:
  replicas: 2
  gpusPerPod: 0
  initTimeoutSeconds: 20
  failurePolicy: {maxRestarts: 0}
  template:
    spec:
      containers:
        - {name: trainer, $2}
YAML
}
no_job badimage "image: $REG/no-such-image:0.1.0"
no_job badcommand "image: $TRAINER_IMAGE, command: [/no/such/program], resources: {requests: {cpu: 50m}}"
no_job toobig "image: $TRAINER_IMAGE, command: [nccl-allreduce], resources: {requests: {cpu: \"64\"}}"
seen() {  # seen <job> <reason regex> <message regex>: kubectl get nj and describe nj show both
  local d=$(( $(date +%s) + ${4:-30} )) row desc
  while [ "$(date +%s)" -lt $d ]; do
    row=$(kubectl -n "$ns" get nj "$1" --no-headers 2>/dev/null || true)
    desc=$(kubectl -n "$ns" describe nj "$1" 2>/dev/null || true)
    if grep -Eq "$2" <<<"$row" && grep -Eq "$3" <<<"$desc"; then
      echo "     kubectl get nj: $row"
      echo "     describe: $(grep -Eo "$3.{0,120}" <<<"$desc" | sed -n 1p)"
      return 0
    fi
    sleep 0.3
  done
  echo "     kubectl get nj: $row" >&2; echo "$desc" | tail -30 >&2
  return 1
}
check "image that does not exist: get nj shows ErrImagePull/ImagePullBackOff, describe names the pod" \
  seen badimage 'ErrImagePull|ImagePullBackOff' 'pod badimage-[01] cannot start: container trainer: (ErrImagePull|ImagePullBackOff)'
check "pod that asks 64 CPUs: get nj shows Unschedulable, describe names the pod and the scheduler's reason" \
  seen toobig 'Unschedulable' 'pod toobig-[01] cannot start: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu'
check "command that does not exist: the job fails (maxRestarts 0) naming the pod and the runtime's error" \
  seen badcommand 'Failed.*MaxRestartsExceeded' 'pod badcommand-[01]: trainer exited with code 128 \(StartError\)'
check "image that does not exist: given up after initTimeoutSeconds (20s)" \
  seen badimage 'Failed.*MaxRestartsExceeded' 'badimage-[01] cannot start: .*still after initTimeoutSeconds, 20s' 60
check "unschedulable: given up after initTimeoutSeconds (20s)" \
  seen toobig 'Failed.*MaxRestartsExceeded' 'toobig-[01] cannot start: Unschedulable.*still after initTimeoutSeconds' 60

echo "images ready in $((t_images - t0))s; real node up in $((t_node - t_images))s; whole tier $(( $(date +%s) - t0 ))s"
[ "$failures" -eq 0 ] || { echo "$failures checks failed"; exit 1; }
