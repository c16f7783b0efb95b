#!/usr/bin/env bash
# End-to-end: the operator installed with Helm runs on a local node (tests/harness/node) with the
# sidecars and nccl-allreduce trainers, against the shared local control plane.
#
#   flow_test.sh <scenario> <index>
#   succeeds    deploy/examples/ncclJob.yaml as is: Succeeded; all 4 ranks log attempt 1 and
#               the same root address; the id never appears in a log
#   kill        one rank's trainer is SIGKILLed mid-run: attempt 2 with new pods and a new id,
#               then Succeeded; kubectl describe nj explains the restart
#   failfast    a trainer exits with a failFastExitCodes code: Failed/FailFastExitCode, no attempt 2
#   kueue       Kueue (tests/harness/kueue) with quota for one job: of two queued 4-pod jobs
#               the second has no pod while the first runs (and restarts), and starts whole when
#               it ends; evicted by Kueue (Workload deactivated), it has no pod and releases its quota,
#               and once reactivated runs attempt 2 (a disruption, not a restart) to Succeeded
#               the admitted ResourceFlavor's nodeLabels and tolerations are on the pods; suspending an
#               admitted job deactivates its Workload and gives the quota back, resuming runs attempt 2;
#               Workload priorities: from the job's kueue.x-k8s.io/priority-class WorkloadPriorityClass
#               (1000) or the pods' PriorityClass (10); of two jobs waiting behind a running one the
#               later, higher one is admitted first; a job whose WorkloadPriorityClass does not exist
#               says so (Admitted condition PriorityClassNotFound, a Warning) until it is made
#               Kueue's waitForPodsReady on: the Workload's PodsReady follows the pods (Started,
#               WaitForRecovery while it restarts, Recovered), a running job is never evicted for it,
#               and a job whose pods never get ready is evicted (PodsReadyTimeout) as a disruption
#   schedule    a real kube-scheduler (its own profile, kept to this test's node, gates GenericWorkload
#               and GangScheduling) on a node with room for 5 pods, 2 taken (the operator and a
#               filler pod): a 4-pod job with gangScheduling Disabled binds 3 and 1 is Unschedulable;
#               the same job gang scheduled (Auto: the API server serves scheduling.k8s.io Workloads)
#               binds none while 3 wait for the 4th; once the filler is deleted all 4 bind together
#               and the job succeeds; deleting it deletes its Workload; the Workload deleted by hand
#               while the pods wait is made again by the operator
#   evict       one pod is evicted through the Eviction API mid-run: attempt 2 with restarts 0 and
#               disruptions 1; the Restarting event says it was an eviction
#   cleanup     deleting the job removes its pods, ConfigMap, Service and RBAC; helm uninstall
#               removes the operator and leaves only the CRD
#   torch       trainers are a real PyTorch program (gloo): init_process_group from the env via the
#               nccl_k8s package (MASTER_ADDR = the root pod's IP) and a checked all_reduce: Succeeded
#   torch-kill  the same, one rank SIGKILLed while attempt 1 trains: attempt 2, new rendezvous, Succeeded
#   torchrun    the same program under `python -m nccl_k8s.torchrun` (NNODES, NODE_RANK, LOCAL_WORLD_SIZE)
#   restricted  Pod Security "restricted" enforced on the namespace, a ResourceQuota that
#               demands limits, trainers under their own ServiceAccount (an IRSA-style role
#               annotation): the operator and the job's pods are admitted and the job Succeeds
# <index> (0..15) picks this test's bridge tnf<index> and subnet 10.246.<index>.0/24, whose .1
# the API server certificate names (tests/harness/controlplane/controlplane.sh), so tests run in
# parallel.
#
# Env (set by CTest): NCCLOP_TEST_CONTROLPLANE_DIR, NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL,
# NCCLOP_TEST_HELM, NCCLOP_BUILD_DIR.
set -euo pipefail
scenario=${1:?scenario}; index=${2:?index}
: "${NCCLOP_TEST_KUBECONFIG:?run through ctest (needs the controlplane fixture)}"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root, iproute2 and unshare (network namespaces)"; exit 77
fi
export KUBECONFIG=$NCCLOP_TEST_KUBECONFIG CONTROLPLANE_DIR=$NCCLOP_TEST_CONTROLPLANE_DIR
kubectl=$NCCLOP_TEST_KUBECTL helm=$NCCLOP_TEST_HELM build=$NCCLOP_BUILD_DIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
for exe in operator/nccl-operator sidecar/nccl-sidecar runtime/nccl-allreduce; do
  [ -x "$build/$exe" ] || { echo "FAIL $build/$exe not built"; exit 1; }
done

node="flow-$scenario-$$"
ns="flow-$scenario-$$"
rel=nccl-operator
# Not under /tmp: the operator pod mounts an emptyDir at /tmp, which would hide the node's
# volume directories from the later mounts of that pod.
mkdir -p "$build/e2e-flow"
work=$(mktemp -d "$build/e2e-flow/$scenario.XXXXXX")
node_pid="" bind_pid="" kueue_cq="" sched_pid=""
failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi; }
contains() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1: '$3' not in: $2"; fi; }
k() { "$kubectl" -n "$ns" "$@"; }
nj() { k get nj "$1" -o "jsonpath=$2"; }
nj_is() { [ "$(nj "$1" "$2")" = "$3" ]; }  # nj_is <job> <jsonpath> <want>
state_is() { nj_is "$1" '{.status.state}' "$2"; }
pods_of() { k get pods -l "nccl.dev/job-name=$1" -o name | wc -l; }
is() { local want=$1; shift; [ "$("$@")" = "$want" ]; }  # is <want> <command...>: it prints that
# has_id <pod> <attempt>: its trainer logged the id of that attempt.
has_id() { k logs "$1" -c trainer 2>/dev/null | grep -q "attempt $2, .*id obtained"; }
# wait_ids <job> <attempt>: each of the job's 4 trainers has the id of that attempt.
wait_ids() { local i; for i in 0 1 2 3; do wait_for 60 "$1-$i has the id of attempt $2" has_id "$1-$i" "$2"; done; }
# signal <pod> <signal>: sends it to the pod's trainer through the node's debug endpoint.
signal() {
  curl -sf -X POST "http://$(cat "$work/state/debug-addr")/debug/kill?namespace=$ns&pod=$1&container=trainer&signal=$2" >/dev/null
}
# wait_for <seconds> <description> <command...>: polls until the command succeeds.
wait_for() {
  local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then fail "$what (not within deadline)"; return 1; fi
    sleep 0.2
  done
  pass "$what"
}

dump() {
  echo "---- nj"; k get nj -o yaml 2>&1 | tail -60
  echo "---- pods"; k get pods -o wide 2>&1
  echo "---- events"; k get events --sort-by=.lastTimestamp 2>&1 | tail -30
  echo "---- operator log"; k logs deploy/$rel 2>&1 | tail -40
  echo "---- node log"; tail -40 "$work/node.log"
  if [ -f "$work/scheduler.log" ]; then echo "---- kube-scheduler log"; tail -20 "$work/scheduler.log"; fi
  local pod
  for pod in $(k get pods -l nccl.dev/job-name -o name 2>/dev/null); do
    echo "---- ${pod#pod/} trainer log"; k logs "$pod" -c trainer --tail 15 2>&1
  done
}
cleanup() {
  local rc=$?
  if [ "$failures" -gt 0 ] || [ "$rc" -ne 0 ]; then dump >&2 || true; fi
  flow_stop_bind_loop
  if [ -n "$sched_pid" ]; then kill "$sched_pid" 2>/dev/null || true; wait "$sched_pid" 2>/dev/null || true; fi
  "$helm" uninstall "$rel" -n "$ns" >/dev/null 2>&1 || true
  flow_stop_node
  if [ -n "$kueue_cq" ]; then
    "$kubectl" delete clusterqueue "$kueue_cq" --wait=false >/dev/null 2>&1 || true
    "$kubectl" delete resourceflavor "$kueue_cq" --wait=false >/dev/null 2>&1 || true
    "$kubectl" delete workloadpriorityclass "$kueue_cq-high" --wait=false >/dev/null 2>&1 || true
    "$kubectl" delete priorityclass "$kueue_cq-low" --wait=false >/dev/null 2>&1 || true
    "$flow_root/tests/harness/kueue/kueue.sh" down --dir "$CONTROLPLANE_DIR" || true
  fi
  "$kubectl" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete node "$node" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# flow.schedule: room for 5 pods on the node (the operator's pod, a filler and 3 of the job's).
if [ "$scenario" = schedule ]; then export FLOW_NODE_FLAGS="--max-pods 5"; fi
flow_start_node "$node" "tnf$index" "10.246.$index.0/24" "$work/state" false "$work/node.log"
"$kubectl" create namespace "$ns" >/dev/null
flow_bind_loop "$ns" "$node"
if [ "$scenario" = kueue ]; then
  # Before the operator starts: it looks for Kueue's Workloads once, at start.
  kueue_cq="flow-kueue-$$"
  "$flow_root/tests/harness/kueue/kueue.sh" up --dir "$CONTROLPLANE_DIR" && pass "Kueue runs with its webhooks" \
    || { fail "Kueue did not start"; exit 1; }
fi
flow_helm_install "$rel" "$ns" --set watchNamespace="$ns" >/dev/null
flow_wait_operator "$rel" "$ns" >/dev/null && pass "operator installed by helm is available on the node" \
  || { fail "operator not available"; exit 1; }

# rank_line <pod>: the trainer's "id obtained" line (rank, attempt, interface, root).
rank_line() { k logs "$1" -c trainer 2>/dev/null | grep 'id obtained' | tail -1; }
root_of() { sed -n 's/.* root \([^:]*:[0-9]*\): id obtained.*/\1/p' <<<"$1"; }
# check_ranks <job> <attempt>: every rank logged this attempt, eth0 and one common root.
check_ranks() {
  local job=$1 attempt=$2 i line root roots=""
  for i in 0 1 2 3; do
    line=$(rank_line "$job-$i")
    contains "$job-$i logs rank $i, attempt $attempt" "$line" "rank $i of 4 pods, attempt $attempt,"
    contains "$job-$i logs the chosen interface" "$line" "interface eth0"
    root=$(root_of "$line")
    case "$root" in 10.246.$index.*) pass "$job-$i root $root on the pod subnet" ;; *) fail "$job-$i root '$root'" ;; esac
    roots="$roots$root"$'\n'
  done
  check "$job: all ranks name the same root" "$(sort -u <<<"${roots%$'\n'}" | wc -l)" 1
  first_root=$(head -1 <<<"$roots")
}
# no_id_in_logs <job>: the published id appears in no trainer or sidecar log.
no_id_in_logs() {
  local id i
  id=$(k get configmap "$1-nccl" -o 'jsonpath={.data.uniqueId}')
  [ -n "$id" ] || { fail "$1: no uniqueId in ConfigMap $1-nccl"; return; }
  for i in 0 1 2 3; do
    if k logs "$1-$i" -c trainer 2>&1 | grep -qF -- "$id" || k logs "$1-$i" -c nccl-sidecar 2>&1 | grep -qF -- "$id"; then
      fail "$1-$i: the id appears in a log"
    fi
  done
  pass "$1: the id appears in no trainer or sidecar log"
}
# nccl_job <name> <trainer command: a YAML flow sequence>: applies a 4-pod CPU NcclJob whose
# trainer runs in the node's trainer image with this build's runtime on PATH. What differs
# between scenarios comes in variables, each line already indented for its place:
# job_labels (a flow mapping), job_spec (under spec), pod_spec (under template.spec),
# trainer_env (the trainer's env, a flow sequence), trainer_extra (under the trainer container).
nccl_job() {
  local env="[{name: PATH, value: \"$build/runtime:/usr/sbin:/usr/bin:/sbin:/bin\"}]"
  cat <<YAML | k apply -f - >/dev/null
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1, labels: ${job_labels:-{\}}}
spec:
  replicas: 4
  gpusPerPod: 0
${job_spec:-  initTimeoutSeconds: 60}
  template:
    spec:
${pod_spec:-}
      containers:
      - name: trainer
        image: nccl-trainer:0.1.0
        command: $2
        env: ${trainer_env:-$env}
${trainer_extra:-}
YAML
}
# trainer_job <name> <failFastExitCodes> <shell script run as the trainer>
trainer_job() {
  job_spec="  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1, failFastExitCodes: [$2]}" nccl_job "$1" "[/bin/sh, -c, '$3']"
}

# torch_job <name> <trainer args...>: 4 CPU pods whose trainer is torch_trainer.py (or what the
# args name) under the nccl_k8s package's venv, PyTorch from scripts/install-torch.sh.
torch_job() {
  local name=$1 argv="" a; shift
  for a in "$@"; do argv="$argv, \"$a\""; done
  job_spec="  initTimeoutSeconds: 120
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1}" \
  trainer_env="[{name: PYTHONPATH, value: \"$torch_dir\"}, {name: PYTHONUNBUFFERED, value: \"1\"}]" \
    nccl_job "$name" "[\"$build/python-venv/bin/python\"$argv]"
}
torch_setup() {
  [ -x "$build/python-venv/bin/python" ] || { fail "no $build/python-venv (python.install makes it)"; exit 1; }
  torch_dir=$("$flow_root/scripts/install-torch.sh") || { fail "scripts/install-torch.sh"; exit 1; }
}
torch_line() { k logs "$1" -c trainer 2>/dev/null | grep ': all_reduce ' | tail -1; }
# check_torch_ranks <job> <attempt>: each rank summed 1+2+3+4 with MASTER_ADDR = the root pod's IP;
# sets root_ip; prints the time from process start to init_process_group's return per rank.
check_torch_ranks() {
  local job=$1 attempt=$2 i line times=""
  root_ip=$(k get pod "$job-0" -o 'jsonpath={.status.podIP}')
  case "$root_ip" in 10.246.$index.*) pass "$job-0 IP $root_ip" ;; *) fail "$job-0 IP '$root_ip'" ;; esac
  for i in 0 1 2 3; do
    line=$(torch_line "$job-$i")
    contains "$job-$i: rank $i, attempt $attempt, checked all_reduce, MASTER_ADDR = root IP" "$line" \
      "rank $i of 4, attempt $attempt: all_reduce 10 (expected 10), MASTER_ADDR $root_ip, "
    times="$times $(sed -n 's/.*returned after \([0-9.]*\) s (import torch \([0-9.]*\) s).*/\1 (import \2/p' <<<"$line")"
    # the package's own line: how long a worker waited for the root's address (none on the root)
    times="$times$(k logs "$job-$i" -c trainer 2>/dev/null | sed -n 's/.*id received from the sidecar for attempt [0-9]* after \([0-9]*\) ms.*/, id wait \1 ms/p' | tail -1))"
  done
  echo "timing $job attempt $attempt: process start -> init_process_group returned, s, ranks 0..3:$times"
}

case "$scenario" in
succeeds)
  k apply -f "$flow_root/deploy/examples/ncclJob.yaml" >/dev/null
  wait_for 60 "demo Succeeded" state_is demo Succeeded
  check "condition Succeeded" "$(nj demo '{.status.conditions[?(@.type=="Succeeded")].status}')" True
  check "condition IdPublished" "$(nj demo '{.status.conditions[?(@.type=="IdPublished")].status}')" True
  check "attempt" "$(nj demo '{.status.attempt}')" 1
  check "restarts" "$(nj demo '{.status.restarts}')" 0
  contains "kubectl get nj" "$(k get nj demo --no-headers)" Succeeded
  check_ranks demo 1
  for i in 0 1 2 3; do
    contains "demo-$i: GPU part skipped, id part succeeded" "$(k logs demo-$i -c trainer)" "GPU part skipped"
  done
  no_id_in_logs demo
  ;;
kill)
  # Attempt 1 "trains" for 120 s after the id part; later attempts finish at once.
  trainer_job kill 3 'if [ "$NCCLJOB_ATTEMPT" = 1 ]; then l=120; else l=0; fi; exec nccl-allreduce --linger-seconds $l'
  wait_ids kill 1
  check_ranks kill 1; root1=$first_root
  old_uids=$(k get pods -l nccl.dev/job-name=kill -o 'jsonpath={.items[*].metadata.uid}')
  id1=$(k get configmap kill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  check "still attempt 1 mid-run" "$(nj kill '{.status.state}/{.status.attempt}')" Running/1
  signal kill-2 KILL \
    && pass "SIGKILL to kill-2's trainer" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is kill '{.status.attempt}' 2
  wait_for 60 "kill Succeeded after the restart" state_is kill Succeeded
  check "restarts" "$(nj kill '{.status.restarts}')" 1
  check "a crash is no disruption" "$(nj kill '{.status.disruptions}')" 0
  new_uids=$(k get pods -l nccl.dev/job-name=kill -o 'jsonpath={.items[*].metadata.uid}')
  common=$(comm -12 <(tr ' ' '\n' <<<"$old_uids" | sort) <(tr ' ' '\n' <<<"$new_uids" | sort) | grep -c . || true)
  check "attempt 2 runs on new pods (no pod UID of attempt 1)" "$common" 0
  check "attempt 2 pods labelled" "$(k get pods -l nccl.dev/job-name=kill,nccl.dev/attempt=2 -o name | wc -l)" 4
  id2=$(k get configmap kill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  [ "$id1" != "$id2" ] && pass "attempt 2 has a new id" || fail "the id did not change"
  check_ranks kill 2
  [ "$first_root" != "$root1" ] && pass "attempt 2 root $first_root differs from $root1" || fail "same root $root1"
  describe=$(k describe nj kill)
  contains "describe: Restarting event" "$describe" Restarting
  contains "describe: names the killed pod" "$describe" kill-2
  contains "describe: gives the exit code" "$describe" 137
  no_id_in_logs kill
  ;;
kueue)
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $kueue_cq}
spec:
  nodeLabels: {ncclop.test/local-node: "true"}
  tolerations: [{key: ncclop.test/flavor, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $kueue_cq}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  resourceGroups:
  - coveredResources: [cpu, memory, ephemeral-storage]
    flavors:
    - name: $kueue_cq
      resources:
      - {name: cpu, nominalQuota: "5"}
      - {name: memory, nominalQuota: 4Gi}
      - {name: ephemeral-storage, nominalQuota: 10Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: $ns}
spec: {clusterQueue: $kueue_cq}
YAML
  # 4 pods x (1 cpu trainer + 10m sidecar): one job fits the quota of 5 cpu, two do not. Kueue
  # admits nothing that requests a resource its ClusterQueue does not cover: the sidecar asks
  # for ephemeral storage too.
  # Trainers get the id, then run until SIGUSR1 (exit 0).
  queued_job() {  # queued_job <name> [more labels, flow mapping entries]
    job_labels="{kueue.x-k8s.io/queue-name: q${2:+, $2}}" job_spec="  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1}" trainer_extra='        resources: {requests: {cpu: "1"}}' \
      nccl_job "$1" '[/bin/sh, -c, '"'"'trap "exit 0" USR1; nccl-allreduce --linger-seconds 0 || exit 1; while :; do sleep 1; done'"'"']'
  }
  state_of() { nj "$1" '{.status.state}/{.status.attempt}'; }
  # wl_cond <job> <type>: the status of that condition of the job's Kueue Workload
  wl_cond() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}"; }
  waits_in_queue() { nj "$1" '{.status.conditions[?(@.type=="Admitted")].message}' | grep -q 'waiting for admission in queue q'; }
  state_and_pods() { echo "$(nj "$1" '{.status.state}')/$(pods_of "$1")"; }
  running_pods_of() { k get pods -l "nccl.dev/job-name=$1" --field-selector=status.phase=Running -o name | wc -l; }
  finish() {  # finish <job>: SIGUSR1 to every trainer of the current attempt
    local i; for i in 0 1 2 3; do signal "$1-$i" USR1; done
  }
  # wl_pods_ready <job>: its Workload's PodsReady condition, status/reason
  wl_pods_ready() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.status.conditions[?(@.type=="PodsReady")].status}/{.status.conditions[?(@.type=="PodsReady")].reason}'; }
  # past_pods_ready_timeout <job>: more than Kueue's waitForPodsReady timeout (20 s,
  # tests/harness/kueue) and 5 s has passed since its Workload was admitted
  past_pods_ready_timeout() {
    local since; since=$(k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].lastTransitionTime}')
    [ -n "$since" ] && [ $(( $(date +%s) - $(date -d "$since" +%s) )) -gt 25 ]
  }
  queued_job first
  wait_for 60 "first admitted and Running" nj_is first '{.status.state}/{.status.attempt}' Running/1
  # Kueue's waitForPodsReady is on: the operator says when every pod of the attempt is ready.
  wait_for 60 "first's Workload: PodsReady True (Started)" is True/Started wl_pods_ready first
  queued_job second
  wait_for 30 "second says: waiting for admission in queue q" waits_in_queue second
  check "second has no pod while first runs" "$(pods_of second)" 0
  check "second is Pending" "$(state_of second)" Pending/0
  contains "describe second: waiting for admission" "$(k describe nj second)" "waiting for admission in queue q"
  contains "first's Workload is admitted" "$(k get workloads.kueue.x-k8s.io nccljob-first -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].status}')" True
  # The admitted flavor places the pods, as Kueue's own integrations do.
  check "first-0 has the flavor's nodeLabels in its nodeSelector" \
    "$(k get pod first-0 -o 'jsonpath={.spec.nodeSelector.ncclop\.test/local-node}')" true
  contains "first-0 has the flavor's toleration" "$(k get pod first-0 -o 'jsonpath={.spec.tolerations[*].key}')" ncclop.test/flavor
  # A restart of first keeps its admission: second does not overtake it.
  wait_ids first 1
  signal first-1 KILL \
    && pass "SIGKILL to first-1's trainer" || fail "debug kill refused"
  wait_for 60 "first restarted: attempt 2 Running" nj_is first '{.status.state}/{.status.attempt}' Running/2
  wait_for 60 "first's Workload: PodsReady True again (Recovered)" is True/Recovered wl_pods_ready first
  wait_for 60 "first runs past Kueue's PodsReady timeout" past_pods_ready_timeout first
  check "first's Workload is not evicted" "$(wl_cond first Evicted)" ""
  check "first: no disruption" "$(nj first '{.status.disruptions}')" 0
  check "first restarts" "$(nj first '{.status.restarts}')" 1
  check "second still has no pod after first's restart" "$(pods_of second)" 0
  wait_ids first 2
  finish first
  wait_for 60 "first Succeeded" state_is first Succeeded
  wait_for 60 "first's Workload is Finished (quota released)" is True wl_cond first Finished
  wait_for 60 "second admitted: all 4 pods Running" nj_is second '{.status.state}/{.status.attempt}' Running/1
  check "second runs whole" "$(running_pods_of second)" 4
  contains "second's events: Admitted" "$(k get events --field-selector involvedObject.name=second -o 'jsonpath={.items[*].reason}')" Admitted
  wait_ids second 1
  # Kueue evicts second (its Workload deactivated): the pods go, then the operator clears the
  # quota reservation as Kueue's job integrations do, and the job waits in the queue again.
  k patch workloads.kueue.x-k8s.io nccljob-second --type merge -p '{"spec":{"active":false}}' >/dev/null \
    && pass "second's Workload deactivated" || fail "cannot deactivate second's Workload"
  wait_for 60 "second's Workload is Evicted" is True wl_cond second Evicted
  wait_for 60 "second's quota reservation cleared (QuotaReserved False)" is False wl_cond second QuotaReserved
  check "second's Workload has no admission" "$(k get workloads.kueue.x-k8s.io nccljob-second -o 'jsonpath={.status.admission}')" ""
  check "second has no pod while evicted" "$(pods_of second)" 0
  wait_for 30 "second says: waiting for admission in queue q" waits_in_queue second
  check "second: no attempt 2 while evicted" "$(nj second '{.status.attempt}')" 1
  check "second has still no pod" "$(pods_of second)" 0
  k patch workloads.kueue.x-k8s.io nccljob-second --type merge -p '{"spec":{"active":true}}' >/dev/null \
    && pass "second's Workload reactivated" || fail "cannot reactivate second's Workload"
  wait_for 60 "second admitted again: attempt 2 Running" nj_is second '{.status.state}/{.status.attempt}' Running/2
  check "second's eviction is a disruption" "$(nj second '{.status.disruptions}')" 1
  check "second's eviction is no restart" "$(nj second '{.status.restarts}')" 0
  check "second's Workload admitted again" "$(wl_cond second Admitted)" True
  contains "second's Restarting event names Kueue's eviction" \
    "$(k get events --field-selector involvedObject.name=second,reason=Restarting -o 'jsonpath={.items[*].message}')" Deactivated
  wait_ids second 2
  finish second
  wait_for 60 "second Succeeded" state_is second Succeeded
  # Suspending an admitted job gives its admission back (the operator deactivates its Workload,
  # as a Kueue user stops a workload); resuming queues it again and runs a new attempt.
  queued_job third
  wait_for 60 "third admitted and Running" nj_is third '{.status.state}/{.status.attempt}' Running/1
  k patch nj third --type merge -p '{"spec":{"suspend":true}}' >/dev/null
  wait_for 60 "third Suspended, its pods gone" is Suspended/0 state_and_pods third
  check "third's Workload deactivated by the operator" \
    "$(k get workloads.kueue.x-k8s.io nccljob-third -o 'jsonpath={.spec.active}/{.metadata.annotations.nccl\.dev/suspended}')" false/true
  wait_for 60 "third's quota given back (QuotaReserved False)" is False wl_cond third QuotaReserved
  wait_for 30 "the ClusterQueue reserves quota for no workload" is 0 "$kubectl" get clusterqueue "$kueue_cq" -o 'jsonpath={.status.reservingWorkloads}'
  check "third's Admitted condition says so" \
    "$(nj third '{.status.conditions[?(@.type=="Admitted")].message}')" "spec.suspend is true: the admission is given back to queue q"
  k patch nj third --type merge -p '{"spec":{"suspend":false}}' >/dev/null
  wait_for 60 "third resumed: admitted again, attempt 2 Running" nj_is third '{.status.state}/{.status.attempt}' Running/2
  check "a suspension is no restart and no disruption" "$(nj third '{.status.restarts}/{.status.disruptions}')" 0/0
  check "third's Workload active again, unmarked" \
    "$(k get workloads.kueue.x-k8s.io nccljob-third -o 'jsonpath={.spec.active}/{.metadata.annotations.nccl\.dev/suspended}')" true/
  wait_ids third 2
  finish third
  wait_for 60 "third Succeeded" state_is third Succeeded
  # Priorities, as Kueue's own integrations give them: the job's kueue.x-k8s.io/priority-class
  # label names a WorkloadPriorityClass, else the pods' priorityClassName a PriorityClass. Of two
  # jobs waiting behind a running one, the later but higher one is admitted first (with both at
  # priority 0, Kueue would take the older first).
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $kueue_cq-low}
value: 10
YAML
  queued_job hold
  wait_for 60 "hold admitted and Running" nj_is hold '{.status.state}/{.status.attempt}' Running/1
  pod_spec="      priorityClassName: $kueue_cq-low" queued_job low
  wait_for 30 "low says: waiting for admission in queue q" waits_in_queue low
  # high's WorkloadPriorityClass does not exist yet: the job says so (condition and Warning),
  # and gets its Workload once the class is made.
  queued_job high "kueue.x-k8s.io/priority-class: $kueue_cq-high"
  admitted_reason() { nj "$1" '{.status.conditions[?(@.type=="Admitted")].reason}'; }
  wait_for 30 "high's Admitted condition: PriorityClassNotFound" is PriorityClassNotFound admitted_reason high
  check "it names the missing class" \
    "$(nj high '{.status.conditions[?(@.type=="Admitted")].message}' | grep -o "WorkloadPriorityClass $kueue_cq-high (the job's label kueue.x-k8s.io/priority-class) does not exist")" \
    "WorkloadPriorityClass $kueue_cq-high (the job's label kueue.x-k8s.io/priority-class) does not exist"
  check "a Warning event says so" \
    "$(k get events --field-selector involvedObject.name=high,reason=PriorityClassNotFound -o 'jsonpath={.items[0].type}')" Warning
  check "high has no Workload" "$(k get workloads.kueue.x-k8s.io nccljob-high -o name 2>/dev/null)" ""
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $kueue_cq-high}
value: 1000
YAML
  wait_for 30 "with the class made, high waits for admission in queue q" waits_in_queue high
  wl_priority() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.spec.priority}/{.spec.priorityClassRef.kind}/{.spec.priorityClassRef.name}'; }
  wait_for 30 "high's Workload: priority 1000 from its label's WorkloadPriorityClass" \
    is "1000/WorkloadPriorityClass/$kueue_cq-high" wl_priority high
  check "low's Workload: priority 10 from its pods' PriorityClass" "$(wl_priority low)" "10/PriorityClass/$kueue_cq-low"
  check "low has no pod while hold runs" "$(pods_of low)" 0
  check "high has no pod while hold runs" "$(pods_of high)" 0
  wait_ids hold 1
  finish hold
  wait_for 60 "hold Succeeded" state_is hold Succeeded
  wait_for 60 "high, queued after low, is admitted first: Running" nj_is high '{.status.state}/{.status.attempt}' Running/1
  check "low still has no pod" "$(pods_of low)" 0
  check "low still waits" "$(state_of low)" Pending/0
  wait_ids high 1
  finish high
  wait_for 60 "then low: Running" nj_is low '{.status.state}/{.status.attempt}' Running/1
  check "low's pods have their PriorityClass" "$(k get pod low-0 -o 'jsonpath={.spec.priorityClassName}/{.spec.priority}')" "$kueue_cq-low/10"
  wait_ids low 1
  finish low
  wait_for 60 "low Succeeded" state_is low Succeeded
  # A job whose pods never get ready (a readiness probe that always fails) is evicted by Kueue's
  # PodsReady timeout, and that eviction is a disruption of its attempt.
  trainer_extra='        resources: {requests: {cpu: "1"}}
        readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}' \
    job_labels="{kueue.x-k8s.io/queue-name: q}" job_spec="  initTimeoutSeconds: 60" \
    nccl_job unready '[/bin/sh, -c, '"'"'while :; do sleep 1; done'"'"']'
  wait_for 60 "unready admitted and Running" nj_is unready '{.status.state}/{.status.attempt}' Running/1
  wait_for 30 "unready's Workload: PodsReady False (WaitForStart)" is False/WaitForStart wl_pods_ready unready
  wait_for 60 "unready's Workload is Evicted" is True wl_cond unready Evicted
  check "by the PodsReady timeout" "$(k get workloads.kueue.x-k8s.io nccljob-unready -o 'jsonpath={.status.conditions[?(@.type=="Evicted")].reason}')" PodsReadyTimeout
  wait_for 60 "unready's eviction is a disruption" nj_is unready '{.status.disruptions}' 1
  check "and no restart" "$(nj unready '{.status.restarts}')" 0
  wait_for 60 "unready's pods are gone while it waits" is 0 pods_of unready
  ;;
schedule)
  # kube-scheduler from the control plane's pinned module, with a profile of this test's own
  # name whose NodeAffinity keeps it to this test's node (other tests' nodes share the cluster),
  # and native gang scheduling on (-v=4: it logs each pod that waits for its gang's quorum).
  sched="flow-$ns"
  cat > "$work/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG"}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: $sched
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$node]}]
YAML
  "$(dirname "$kubectl")/kube-scheduler" --config "$work/scheduler.yaml" --secure-port 0 \
    --feature-gates=GenericWorkload=true,GangScheduling=true -v=4 >"$work/scheduler.log" 2>&1 &
  sched_pid=$!
  # The filler takes one place on the node until the test gives it back (bound by the bind loop).
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: filler}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleep
    image: nccl-trainer:0.1.0
    command: [/bin/sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']
    env: [{name: PATH, value: "/usr/sbin:/usr/bin:/sbin:/bin"}]
YAML
  wait_for 60 "the filler pod runs on the node" is Running k get pod filler -o 'jsonpath={.status.phase}'
  sched_job() {  # sched_job <name> <seconds the trainers linger after the id> <gangScheduling>
    # The test control plane runs no node lifecycle controller, so the node keeps the
    # not-ready taint the API server gives every new Node.
    job_spec="  initTimeoutSeconds: 120
  gangScheduling: $3" pod_spec="      schedulerName: $sched
      tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule}]" \
      nccl_job "$1" "[/bin/sh, -c, 'exec nccl-allreduce --linger-seconds $2']"
  }
  bound() { k get pods -l "nccl.dev/job-name=$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
  bound_is() { [ "$(bound "$1")" = "$2" ]; }
  unschedulable_said() {
    k get pods -l "nccl.dev/job-name=$1" -o 'jsonpath={.items[*].status.conditions[?(@.type=="PodScheduled")].message}' | grep -q "$2"
  }
  # Pods of <job> that kube-scheduler holds at Permit until their gang is complete.
  gang_waiting() { grep 'Quorum is not met for a gang' "$work/scheduler.log" | grep -o "pod=\"$ns/$1-[0-9]*\"" | sort -u | wc -l; }
  gang_waiting_is() { [ "$(gang_waiting "$1")" = "$2" ]; }

  # Without gang scheduling: 3 of 4 pods bind and hold their places while the 4th cannot.
  # (big's trainers keep their pods: a finished pod frees its place on the node.)
  sched_job big 300 Disabled
  wait_for 60 "gangScheduling Disabled: kube-scheduler binds 3 of big's 4 pods" bound_is big 3
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said big "Too many pods"
  check "still 3 bound" "$(bound big)" 3
  check "all bound pods are on this test's node" \
    "$(k get pods -l nccl.dev/job-name=big -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort -u)" "$node"
  check "big is not Running" "$(nj big '{.status.state}')" Pending
  check "big has no gang Workload" "$(k get workloads.scheduling.k8s.io big -o name 2>/dev/null || true)" ""
  check "big's pods name no Workload" "$(k get pod big-0 -o 'jsonpath={.spec.workloadRef}')" ""
  k delete nj big --wait=true --timeout=60s >/dev/null
  wait_for 60 "big's pods are gone" is "" k get pods -l nccl.dev/job-name=big -o name

  # The same job gang scheduled: no pod binds while the 4th does not fit.
  sched_job gang 0 Auto
  wait_for 30 "gang's Workload: one pod group, minCount 4" is trainers/4 \
    k get workloads.scheduling.k8s.io gang -o 'jsonpath={.spec.podGroups[0].name}/{.spec.podGroups[0].policy.gang.minCount}'
  check "the Workload is owned by the job" \
    "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" \
    "NcclJob/gang/$(nj gang '{.metadata.uid}')"
  check "its controllerRef names the job" "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.spec.controllerRef.kind}/{.spec.controllerRef.name}')" NcclJob/gang
  wait_for 30 "gang's 4 pods exist" is 4 pods_of gang
  check "every pod names the Workload, pod group and attempt" \
    "$(k get pods -l nccl.dev/job-name=gang -o 'jsonpath={range .items[*]}{.spec.workloadRef.name}/{.spec.workloadRef.podGroup}/{.spec.workloadRef.podGroupReplicaKey}{"\n"}{end}' | sort -u)" \
    gang/trainers/attempt-1
  wait_for 60 "kube-scheduler holds 3 of gang's pods for their gang" gang_waiting_is gang 3
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said gang "Too many pods"
  check "no pod of gang is bound" "$(bound gang)" 0
  check "gang is not Running" "$(nj gang '{.status.state}')" Pending

  # The gang Workload deleted by hand (while its pods wait for it) is made again by the
  # operator, owned by the job, and the pods still wait for their whole gang.
  old_uid=$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.uid}')
  k delete workloads.scheduling.k8s.io gang --wait=true --timeout=60s >/dev/null && pass "gang's Workload deleted by hand" \
    || fail "cannot delete gang's Workload"
  gang_uid() { k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.uid}' 2>/dev/null; }
  gang_remade() { local uid; uid=$(gang_uid); [ -n "$uid" ] && [ "$uid" != "$old_uid" ]; }
  wait_for 60 "the operator makes the gang Workload again" gang_remade
  check "the new Workload is owned by the job, one pod group of minCount 4" \
    "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.ownerReferences[0].name}/{.spec.podGroups[0].policy.gang.minCount}')" gang/4
  check "still no pod of gang is bound" "$(bound gang)" 0

  # Room for the 4th: kube-scheduler lets the whole gang through at once, then all 4 are bound.
  k delete pod filler --wait=false >/dev/null
  wait_for 60 "kube-scheduler: the gang's quorum is met, all 4 pods allowed together" sh -c \
    "grep 'Quorum is met for a gang' '$work/scheduler.log' | grep 'pod=\"$ns/gang-' | grep -q 'allowedPods=4'"
  wait_for 60 "all 4 of gang's pods are bound" bound_is gang 4
  wait_for 120 "gang Succeeds" state_is gang Succeeded
  k delete nj gang --wait=true --timeout=60s >/dev/null
  wait_for 60 "deleting the job deletes its Workload" sh -c "! '$kubectl' -n '$ns' get workloads.scheduling.k8s.io gang -o name >/dev/null 2>&1"
  ;;
evict)
  # As in kill, but pod evict-2 is evicted (a node drain does this): the API server marks it
  # DisruptionTarget (EvictionByEvictionAPI) and deletes it; that is no failure of the job's own.
  trainer_job evict 3 'if [ "$NCCLJOB_ATTEMPT" = 1 ]; then l=120; else l=0; fi; exec nccl-allreduce --linger-seconds $l'
  wait_ids evict 1
  wait_for 30 "attempt 1 Running" nj_is evict '{.status.state}/{.status.attempt}' Running/1
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"evict-2","namespace":"%s"}}' "$ns" \
    | "$kubectl" create --raw "/api/v1/namespaces/$ns/pods/evict-2/eviction" -f - >/dev/null \
    && pass "Eviction API accepted the eviction of evict-2" || fail "eviction refused"
  wait_for 60 "attempt 2 started" nj_is evict '{.status.attempt}' 2
  wait_for 60 "evict Succeeded after the disruption" state_is evict Succeeded
  check "restarts unchanged" "$(nj evict '{.status.restarts}')" 0
  check "disruptions" "$(nj evict '{.status.disruptions}')" 1
  check "Restarting condition: the backoff followed a disruption" \
    "$(nj evict '{.status.conditions[?(@.type=="Restarting")].message}')" "backoff over after disruption 1"
  check "attempt 2 pods labelled" "$(k get pods -l nccl.dev/job-name=evict,nccl.dev/attempt=2 -o name | wc -l)" 4
  events=$(k get events --field-selector involvedObject.name=evict,reason=Restarting -o 'jsonpath={.items[*].message}')
  contains "Restarting event: an eviction" "$events" "was disrupted (Eviction: pod evict-2 was evicted through the Eviction API"
  contains "Restarting event: not a restart" "$events" "not counted in failurePolicy.maxRestarts"
  contains "describe: Disruptions in kubectl get -o wide" "$(k get nj evict -o wide)" DISRUPTIONS
  ;;
failfast)
  # Rank 2 fails for good (exit 3, listed in failFastExitCodes) after the id part; the others train on.
  trainer_job failfast 3 'nccl-allreduce --linger-seconds $([ "$NCCLJOB_INDEX" = 2 ] && echo 0 || echo 120) || exit 1; if [ "$NCCLJOB_INDEX" = 2 ]; then echo "rank 2: unrecoverable, exit 3"; exit 3; fi'
  wait_for 60 "failfast Failed" state_is failfast Failed
  check "Failed reason" "$(nj failfast '{.status.conditions[?(@.type=="Failed")].reason}')" FailFastExitCode
  contains "Failed message names the code" "$(nj failfast '{.status.conditions[?(@.type=="Failed")].message}')" 3
  # Failed is terminal: wait until the attempt's pods are gone, then nothing new may appear.
  wait_for 60 "attempt 1 pods stopped" is "" k get pods -l nccl.dev/job-name=failfast --field-selector=status.phase=Running -o name
  check "no attempt 2 pods" "$(k get pods -l nccl.dev/job-name=failfast,nccl.dev/attempt=2 -o name)" ""
  check "attempt stays 1" "$(nj failfast '{.status.attempt}/{.status.restarts}')" 1/0
  # (attempt 1 shows as "Created"; AttemptStarted and Restarting events belong to later attempts)
  check "no Restarting or AttemptStarted event" \
    "$(k get events --field-selector involvedObject.name=failfast -o 'jsonpath={.items[*].reason}' | tr ' ' '\n' | grep -c -e '^Restarting$' -e '^AttemptStarted$' || true)" 0
  contains "describe: FailFastExitCode event" "$(k describe nj failfast)" FailFastExitCode
  ;;
restricted)
  # The operator was admitted under "baseline" (the default); now the strictest profile.
  k label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
  # Every container (the injected sidecar too) must declare these, or its pod is refused.
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ResourceQuota
metadata: {name: demands-limits}
spec:
  hard: {requests.cpu: "8", requests.memory: 8Gi, limits.cpu: "16", limits.memory: 16Gi}
YAML
  # Admission enforces a quota once the quota controller has recorded its status.
  wait_for 60 "the ResourceQuota is in force" sh -c "[ -n \"\$('$kubectl' -n '$ns' get resourcequota demands-limits -o 'jsonpath={.status.hard.limits\.cpu}')\" ]"
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::111122223333:role/trainer"}
---
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: strict}
spec:
  replicas: 4
  gpusPerPod: 0
  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 0}
  template:
    spec:
      serviceAccountName: trainer
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: trainer
        image: nccl-trainer:0.1.0
        command: [nccl-allreduce]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "1", memory: 512Mi}
YAML
  wait_for 60 "strict Succeeded" state_is strict Succeeded
  check "no refused pod create" "$(k get events --field-selector involvedObject.name=strict,reason=PodCreateFailed -o name)" ""
  check "pods run as the template's ServiceAccount" \
    "$(k get pods -l nccl.dev/job-name=strict -o 'jsonpath={.items[*].spec.serviceAccountName}')" "trainer trainer trainer trainer"
  check "the ServiceAccount keeps its role annotation" \
    "$(k get sa trainer -o 'jsonpath={.metadata.annotations.eks\.amazonaws\.com/role-arn}')" "arn:aws:iam::111122223333:role/trainer"
  check "no per-job ServiceAccount" "$(k get sa strict-nccl -o name 2>/dev/null || true)" ""
  check "the sidecar's limits" "$(k get pod strict-0 -o 'jsonpath={.spec.initContainers[0].resources.limits.cpu}/{.spec.initContainers[0].resources.limits.memory}')" 500m/64Mi
  # The quota is real: a restricted-compliant pod without limits is refused.
  refused=$(cat <<YAML | k apply --dry-run=server -f - 2>&1 || true
apiVersion: v1
kind: Pod
metadata: {name: no-limits}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - {name: c, image: nccl-trainer:0.1.0, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
YAML
)
  contains "the quota refuses a pod without limits" "$refused" "must specify limits"
  check_ranks strict 1
  no_id_in_logs strict
  ;;
cleanup)
  k apply -f "$flow_root/deploy/examples/ncclJob.yaml" >/dev/null
  wait_for 60 "demo Succeeded" state_is demo Succeeded
  for obj in pod/demo-0 pod/demo-3 configmap/demo-nccl service/demo serviceaccount/demo-nccl role/demo-nccl rolebinding/demo-nccl; do
    k get "$obj" >/dev/null 2>&1 && pass "$obj exists" || fail "$obj missing before delete"
  done
  k delete nj demo --wait=true --timeout=30s >/dev/null
  children() { k get pods,configmaps,services,serviceaccounts,roles,rolebindings -o name | grep -E '/demo(-|$)' || true; }
  wait_for 60 "deleting the job removes its pods, ConfigMap, Service and RBAC" sh -c "! '$kubectl' -n '$ns' get pods,configmaps,services,serviceaccounts,roles,rolebindings -o name | grep -qE '/demo(-|\$)'"
  left=$(children); [ -z "$left" ] || fail "left after delete: $left"
  "$helm" uninstall "$rel" -n "$ns" --wait --timeout 60s >/dev/null && pass "helm uninstall" || fail "helm uninstall"
  wait_for 60 "operator pod gone" is "" k get pods -o name
  # Everything namespaced that is left, minus what every namespace has and the events.
  left=$(k api-resources --verbs=list --namespaced -o name 2>/dev/null | grep -v '^events' | paste -sd, - \
         | xargs -I{} "$kubectl" -n "$ns" get {} -o name 2>/dev/null \
         | grep -v -e '^configmap/kube-root-ca.crt$' -e '^serviceaccount/default$' || true)
  check "after helm uninstall nothing of the release is left in the namespace (its Lease included)" "$left" ""
  # Other flow tests install releases of the same name in their own namespaces: helm marks
  # each object with its release's namespace.
  check "no cluster-scoped objects of the release" \
    "$("$kubectl" get clusterroles,clusterrolebindings -l "app.kubernetes.io/instance=$rel" \
        -o jsonpath='{range .items[*]}{.metadata.annotations.meta\.helm\.sh/release-namespace} {.metadata.name}{"\n"}{end}' \
      | awk -v ns="$ns" '$1 == ns')" ""
  "$kubectl" get crd nccljobs.nccl.dev >/dev/null && pass "the CRD stays" || fail "CRD gone"
  ;;
torch)
  torch_setup
  torch_job torch "$flow_root/tests/e2e/flow/torch_trainer.py"
  wait_for 300 "torch Succeeded" state_is torch Succeeded
  check "attempt/restarts" "$(nj torch '{.status.attempt}/{.status.restarts}')" 1/0
  check_torch_ranks torch 1
  ;;
torch-kill)
  torch_setup
  torch_job tkill "$flow_root/tests/e2e/flow/torch_trainer.py" --linger-attempt-1 120
  for i in 0 1 2 3; do
    wait_for 300 "tkill-$i summed in attempt 1" sh -c "'$kubectl' -n '$ns' logs tkill-$i -c trainer | grep -q 'attempt 1: all_reduce'"
  done
  check_torch_ranks tkill 1
  id1=$(k get configmap tkill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  signal tkill-2 KILL \
    && pass "SIGKILL to tkill-2's trainer" || fail "debug kill refused"
  wait_for 60 "attempt 2 started" nj_is tkill '{.status.attempt}' 2
  wait_for 300 "tkill Succeeded after the restart" state_is tkill Succeeded
  check "restarts" "$(nj tkill '{.status.restarts}')" 1
  check_torch_ranks tkill 2
  # The node may give the new root the old one's IP; the id (fresh magic per attempt) must change.
  id2=$(k get configmap tkill-nccl -o 'jsonpath={.data.uniqueId}' | sha256sum)
  [ "$id1" != "$id2" ] && pass "attempt 2 rendezvoused through a new id" || fail "the id did not change"
  contains "describe names the killed pod" "$(k describe nj tkill)" tkill-2
  ;;
torchrun)
  torch_setup
  torch_job trun -m nccl_k8s.torchrun "$flow_root/tests/e2e/flow/torch_trainer.py"
  wait_for 300 "trun Succeeded" state_is trun Succeeded
  check_torch_ranks trun 1
  ;;
roots)
  # Two bootstrap roots for 4 one-rank pods: pods 0 and 2 each make an id (NCCL's first rank of
  # blocks 0-1 and 2-3); the operator publishes both, in root order, once both are in.
  job_spec="  initTimeoutSeconds: 60
  network: {bootstrapRoots: 2}" nccl_job roots '[nccl-allreduce]'
  wait_for 60 "roots Succeeded" state_is roots Succeeded
  check "condition IdPublished" "$(nj roots '{.status.conditions[?(@.type=="IdPublished")].status}')" True
  list=$(k get configmap roots-nccl -o 'jsonpath={.data.uniqueId}')
  check "ConfigMap roots-nccl holds 2 ids" "$(tr ',' '\n' <<<"$list" | grep -c .)" 2
  for id in $(tr ',' ' ' <<<"$list"); do
    check "each id is 128 bytes of base64" "$(base64 -d <<<"$id" | wc -c)" 128
  done
  check "pod 0 and pod 2 reported ids, pods 1 and 3 none" \
    "$(for i in 0 1 2 3; do k get pod roots-$i -o 'jsonpath={.metadata.annotations.nccl\.dev/unique-id-attempt}'; echo -n /; done)" "1//1//"
  check "every pod has NCCLJOB_BOOTSTRAP_ROOTS=2" \
    "$(k get pods -l nccl.dev/job-name=roots -o jsonpath='{range .items[*]}{.spec.containers[0].env[?(@.name=="NCCLJOB_BOOTSTRAP_ROOTS")].value}{end}')" 2222
  ip0=$(k get pod roots-0 -o 'jsonpath={.status.podIP}'); ip2=$(k get pod roots-2 -o 'jsonpath={.status.podIP}')
  lists=""
  for i in 0 1 2 3; do
    line=$(k logs "roots-$i" -c trainer 2>/dev/null | grep 'ids obtained' | tail -1)
    contains "roots-$i logs rank $i, attempt 1" "$line" "rank $i of 4 pods, attempt 1,"
    roots_seen=$(sed -n 's/.* roots \([^ ]*\): ids obtained.*/\1/p' <<<"$line")
    case "$roots_seen" in "$ip0":*,"$ip2":*) pass "roots-$i: root 0 on pod 0 ($ip0), root 1 on pod 2 ($ip2)" ;;
      *) fail "roots-$i: roots '$roots_seen', want $ip0:PORT,$ip2:PORT" ;; esac
    lists="$lists$roots_seen"$'\n'
  done
  check "all ranks got the same list" "$(sort -u <<<"${lists%$'\n'}" | wc -l)" 1
  contains "the Role lets both roots patch themselves" "$(k get role roots-nccl -o 'jsonpath={.rules[1].resourceNames}')" '"roots-0","roots-2"'
  ;;
*) echo "unknown scenario $scenario"; exit 2 ;;
esac

if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all $scenario checks passed"
