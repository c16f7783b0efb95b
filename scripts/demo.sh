#!/usr/bin/env bash
# The demo on a fresh machine: builds everything, starts the local control plane, installs
# the NcclJob CRD and shows the API server answering. Leaves the control plane running with
# --keep (then: source .demo/env; kubectl get nj), otherwise tears it down at the end.
#
#   scripts/demo.sh [--keep] [--dir DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.demo"
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
"$root/scripts/setup.sh"
cp_sh="$root/tests/controlplane/controlplane.sh"
[ "$keep" -eq 1 ] || trap '"$cp_sh" down --dir "$dir"' EXIT
"$cp_sh" up --dir "$dir"
# shellcheck source=/dev/null
source "$dir/env"
kubectl() { "$CONTROLPLANE_BIN/kubectl" "$@"; }
step() { printf '\n$ %s\n' "$*"; }

step kubectl get --raw /version
kubectl get --raw /version; echo
if [ -f "$root/deploy/crd/nccljobs.nccl.dev.yaml" ]; then
  step kubectl apply -f deploy/crd/nccljobs.nccl.dev.yaml
  kubectl apply -f "$root/deploy/crd/nccljobs.nccl.dev.yaml"
  kubectl wait --for=condition=Established --timeout=60s crd/nccljobs.nccl.dev >/dev/null
fi
step kubectl get crd
kubectl get crd
echo
echo "demo finished in $(( $(date +%s) - t0 ))s"
[ "$keep" -eq 0 ] || echo "control plane left running: source $dir/env; \$CONTROLPLANE_BIN/kubectl get nj; stop with tests/controlplane/controlplane.sh down --dir $dir"
