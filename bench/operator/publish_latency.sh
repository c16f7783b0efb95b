#!/usr/bin/env bash
# Id publish latency while the attempt's pods are still being created: applies one NcclJob of
# R replicas (default 1000), annotates pod <job>-0 with an id as soon as it exists (the root
# sidecar's step), and times annotate -> ConfigMap <job>-nccl holds the id. Before the fast
# path this waited for the reconcile that creates all R pods. Needs a running control plane:
#   NCCLOP_TEST_CONTROLPLANE_DIR=D bench/operator/publish_latency.sh [--build DIR] [--replicas R]
# kubectl polling: resolution is one kubectl call (~0.05-0.2 s on a loaded machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
replicas=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--replicas R]" >&2; exit 2 ;;
  esac
done
op=$build/operator/nccl-operator
cp_dir=${NCCLOP_TEST_CONTROLPLANE_DIR:?set NCCLOP_TEST_CONTROLPLANE_DIR to a running control plane}
# shellcheck source=/dev/null
source "$cp_dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
ns=bench-pub-$$
log=$(mktemp)
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT
k apply --server-side --force-conflicts -f "$root/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
k create namespace "$ns" >/dev/null
"$op" --kubeconfig "$cp_dir/kubeconfig" --namespace "$ns" --metrics-bind-address=127.0.0.1:0 \
  --health-probe-bind-address=127.0.0.1:0 --log-level=info >"$log" 2>&1 &
pid=$!
deadline=$(( $(date +%s) + 30 ))
until grep -q "caches synced" "$log"; do [ "$(date +%s)" -lt "$deadline" ] || exit 1; sleep 0.1; done
k apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: pub}
spec:
  replicas: $replicas
  template:
    spec:
      containers: [{name: trainer, image: trainer:1}]
YAML
until k get pod pub-0 -n "$ns" >/dev/null 2>&1; do sleep 0.02; done
start=$(date +%s.%N)
k annotate pod pub-0 -n "$ns" nccl.dev/unique-id=QklH nccl.dev/unique-id-attempt=1 >/dev/null
until [ "$(k get cm pub-nccl -n "$ns" -o jsonpath='{.data.uniqueId}')" = QklH ]; do sleep 0.02; done
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
pods=$(k get pods -n "$ns" --no-headers 2>/dev/null | wc -l)
printf 'annotate -> id in ConfigMap: %.2f s (pods existing then: %s of %s)\n' "$elapsed" "$pods" "$replicas"
