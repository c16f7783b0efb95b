#!/usr/bin/env bash
# End-to-end: the operator installed with Helm runs on a local node (tests/harness/node) with the
# sidecars and nccl-allreduce trainers, against the shared local control plane.
#
#   flow_test.sh <scenario> <index>
#   <scenario>  the file scenarios/<scenario>.sh, which says what it proves: succeeds, kill,
#               failfast, kueue, schedule, evict, cleanup, torch, torch-kill, torchrun,
#               restricted, roots, tas
# <index> (0..23) picks this test's bridge tnf<index> and subnet 10.246.<index>.0/24, whose .1
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
# The scenario's file: scenario() runs its checks once the node, the namespace and the operator
# are up. It may set FLOW_NODE_FLAGS (testnode's extra flags) and define the hooks
# scenario_before_operator (run just before the operator is installed), scenario_stop (run once
# the bind loop has stopped, before the operator is uninstalled) and scenario_cleanup (after the
# node has stopped).
scenario_file="$(dirname "$0")/scenarios/$scenario.sh"
[ -f "$scenario_file" ] || { echo "unknown scenario $scenario"; exit 2; }
# shellcheck source=/dev/null
source "$scenario_file"

node="flow-$scenario-$$"
ns="flow-$scenario-$$"
rel=nccl-operator
# Not under /tmp: the operator pod mounts an emptyDir at /tmp, which would hide the node's
# volume directories from the later mounts of that pod.
mkdir -p "$build/e2e-flow"
work=$(mktemp -d "$build/e2e-flow/$scenario.XXXXXX")
node_pid="" bind_pid=""
failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi; }
contains() { if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: '$3' not in: $2"; fi; }
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
# signal <pod> <signal> [container]: testnode sends the signal to the container (the trainer by default).
signal() {
  curl -sf -X POST "http://$(cat "$work/state/debug-addr")/debug/kill?namespace=$ns&pod=$1&container=${3:-trainer}&signal=$2" >/dev/null
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
  if declare -F scenario_stop >/dev/null; then scenario_stop; fi
  "$helm" uninstall "$rel" -n "$ns" >/dev/null 2>&1 || true
  flow_stop_node
  if declare -F scenario_cleanup >/dev/null; then scenario_cleanup; fi
  "$kubectl" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete node "$node" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

flow_start_node "$node" "tnf$index" "10.246.$index.0/24" "$work/state" false "$work/node.log"
"$kubectl" create namespace "$ns" >/dev/null
flow_bind_loop "$ns" "$node"
if declare -F scenario_before_operator >/dev/null; then scenario_before_operator; fi
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
# trainer_job <name> <failFastExitCodes> <shell script run as the trainer>; restart_strategy=S sets
# failurePolicy.restartStrategy (unset: Auto, in place on testnode, which declares the feature);
# gang_scheduling=G sets spec.gangScheduling; stall_timeout=N sets failurePolicy.stallTimeoutSeconds.
trainer_job() {
  job_spec="  initTimeoutSeconds: 60${gang_scheduling:+
  gangScheduling: $gang_scheduling}
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1, failFastExitCodes: [$2]${restart_strategy:+, restartStrategy: $restart_strategy}${stall_timeout:+, stallTimeoutSeconds: $stall_timeout}}" \
    nccl_job "$1" "[/bin/sh, -c, '$3']"
}

# torch_job <name> <trainer args...>: 4 CPU pods whose trainer is torch_trainer.py (or what the
# args name) under the nccl_k8s package's venv, PyTorch from scripts/install-torch.sh.
torch_job() {
  local name=$1 argv="" a; shift
  for a in "$@"; do argv="$argv, \"$a\""; done
  job_spec="  initTimeoutSeconds: 120
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1}" \
  trainer_env="[{name: PYTHONPATH, value: \"$torch_dir\"}, {name: PYTHONUNBUFFERED, value: \"1\"}, {name: FLOW_CONTRACT_REFS, value: \"\$(MASTER_ADDR):\$(MASTER_PORT) rank \$(RANK) of \$(WORLD_SIZE) job \$(NCCLJOB_NAME)\"}]" \
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

scenario

if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all $scenario checks passed"
