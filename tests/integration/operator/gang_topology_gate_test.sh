#!/usr/bin/env bash
# spec.gangTopologyKey where kube-apiserver runs without feature gate TopologyAwareWorkloadScheduling
# (1.36+, alpha, off by default): the API server drops the gang's schedulingConstraints without a
# word. On a control plane of its own with gang scheduling's gates only, the operator makes the
# Workload, sees it come back without the constraint, and fails the job (reason
# GangTopologyNotServed, naming the gate) before it makes any pod, rather than letting it run spread
# over domains. A job without the key runs as before. (With the gate on, flow.tas shows the
# constraint kept and obeyed.)
#
# Env (set by CTest): NCCLOP_OPERATOR_BIN, NCCLOP_CRD_FILE.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
# shellcheck source=../../harness/controlplane/lib.sh
source "$root/tests/harness/controlplane/lib.sh"
minor=$(kube_minor)
if [ "$minor" -lt 36 ]; then echo "SKIP: PodGroups (and their topology constraint) come with 1.36"; exit 77; fi
gates=GenericWorkload=true
if [ "$minor" -eq 36 ]; then gates=$gates,GangScheduling=true; fi

dir=$(mktemp -d /tmp/ncclop-gangtopo.XXXXXX)
operator_pid="" failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi; }
wait_for() {  # wait_for <seconds> <description> <command...>
  local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then fail "$what (not within deadline)"; return 1; fi
    sleep 0.2
  done
  pass "$what"
}
cleanup() {
  local rc=$?
  if [ -n "$operator_pid" ]; then kill "$operator_pid" 2>/dev/null || true; wait "$operator_pid" 2>/dev/null || true; fi
  if [ "$failures" -gt 0 ] || [ "$rc" -ne 0 ]; then tail -30 "$dir/operator.log" >&2 || true; fi
  "$root/tests/harness/controlplane/controlplane.sh" down --dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

CONTROLPLANE_FEATURE_GATES=$gates "$root/tests/harness/controlplane/controlplane.sh" up --dir "$dir"
# shellcheck source=/dev/null
source "$dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
k apply --server-side -f "$NCCLOP_CRD_FILE" >/dev/null
wait_for 60 "CRD established" sh -c \
  "'$CONTROLPLANE_BIN/kubectl' --kubeconfig '$dir/kubeconfig' get crd nccljobs.nccl.dev -o 'jsonpath={.status.conditions[?(@.type==\"Established\")].status}' | grep -qx True"
ns=gangtopo
k create namespace "$ns" >/dev/null
"$NCCLOP_OPERATOR_BIN" --kubeconfig="$dir/kubeconfig" --namespace="$ns" --metrics-bind-address=0 \
  --health-probe-bind-address=0 >"$dir/operator.log" 2>&1 &
operator_pid=$!

job() {  # job <name> [gangTopologyKey]
  cat <<YAML | k -n "$ns" apply -f - >/dev/null
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1}
spec:
  replicas: 2
  gpusPerPod: 0
${2:+  gangTopologyKey: $2}
  template:
    spec:
      containers: [{name: trainer, image: trainer:1}]
YAML
}
reason_of() { k -n "$ns" get nj "$1" -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}'; }
reason_is() { [ "$(reason_of "$1")" = "$2" ]; }
workloads="workloads.$(gang_api_version "$minor").scheduling.k8s.io"

job spread example.com/rack
wait_for 60 "the job with gangTopologyKey fails: GangTopologyNotServed" reason_is spread GangTopologyNotServed
message=$(k -n "$ns" get nj spread -o 'jsonpath={.status.conditions[?(@.type=="Failed")].message}')
case "$message" in *TopologyAwareWorkloadScheduling*) pass "its message names the feature gate" ;; *) fail "message: $message" ;; esac
check "its Workload came back without the constraint (the API server dropped it)" \
  "$(k -n "$ns" get "$workloads" spread -o 'jsonpath={.spec.podGroupTemplates[0].name}/{.spec.podGroupTemplates[0].schedulingConstraints.topology}')" \
  "trainers/"
check "it made no pod" "$(k -n "$ns" get pods -l nccl.dev/job-name=spread -o name | wc -l)" 0
job plain
wait_for 60 "a job without the key makes its 2 pods" sh -c \
  "[ \$('$CONTROLPLANE_BIN/kubectl' --kubeconfig '$dir/kubeconfig' -n '$ns' get pods -l nccl.dev/job-name=plain -o name | wc -l) = 2 ]"
check "and does not fail" "$(reason_of plain)" ""

if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
