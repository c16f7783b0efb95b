#!/usr/bin/env bash
# The demo on a fresh machine: builds everything, starts the local control plane and a local
# node (tests/node: pods run as processes in network namespaces; no Docker, no GPU), installs
# the operator with Helm, applies deploy/examples/ncclJob.yaml and shows the job succeed:
# kubectl get nj, its conditions, its events and every rank's log lines. Tears everything
# down at the end unless --keep (then: source DIR/env; kubectl get nj).
#
#   scripts/demo.sh [--keep] [--dir DIR] [--build-dir DIR] [--no-build]
#     --dir        control plane and node state (default .demo)
#     --build-dir  the C++ build (default build, as scripts/test.sh)
#     --no-build   use the build as it is (needs nccl-operator, nccl-sidecar, nccl-allreduce)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.demo"
build="$root/build"
keep=0
setup_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-build) setup_flags+=(--no-build); shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo -E)   # the node makes network namespaces and a bridge

phase() { printf '\n### %s (%ss)\n' "$*" "$(( $(date +%s) - t0 ))"; }
# show <command...>: prints "$ command" as a user would type it, then runs it.
show() {
  local shown=("$@")
  local a line="$"
  for a in "${shown[@]}"; do
    a=${a#"$root/"}
    if [[ "$a" =~ ^[A-Za-z0-9_./=:,@%+-]+$ ]]; then line+=" $a"; else line+=" '$a'"; fi
  done
  printf '\n%s\n' "$line"
  case "$1" in
    kubectl) shift; "$CONTROLPLANE_BIN/kubectl" "$@" ;;
    helm) shift; "$CONTROLPLANE_BIN/helm" "$@" ;;
    *) "$@" ;;
  esac
}

phase "build (scripts/setup.sh: packages, NVIDIA wheels, control plane binaries, C++ build)"
"$root/scripts/setup.sh" --build-dir "$build" "${setup_flags[@]}"
mkdir -p "$build"; build=$(cd "$build" && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

phase "local control plane"
cp_sh="$root/tests/controlplane/controlplane.sh"
"$cp_sh" up --dir "$dir"
# shellcheck source=/dev/null
source "$dir/env"
kubectl=$CONTROLPLANE_BIN/kubectl helm=$CONTROLPLANE_BIN/helm
# shellcheck source=../tests/e2e/flow/lib.sh
source "$root/tests/e2e/flow/lib.sh"
node_pid=""
teardown() {
  phase "tear down"
  "$helm" uninstall nccl-operator -n nccl-system --wait --timeout 60s >/dev/null 2>&1 || true
  if [ -n "$node_pid" ]; then "${sudo[@]}" kill -TERM "$node_pid" 2>/dev/null || true; wait "$node_pid" 2>/dev/null || true; fi
  "$cp_sh" down --dir "$dir"
  echo "demo took $(( $(date +%s) - t0 ))s in all"
}
[ "$keep" -eq 1 ] || trap teardown EXIT

phase "local node (tests/node; images map to $build)"
node_bin=$("$root/tests/node/build.sh" | tail -1)
# A ready file left by an earlier run (--keep, or a node killed hard) would pass the wait below
# before this node has registered.
"${sudo[@]}" rm -f "$dir/node/ready"
"${sudo[@]}" "$node_bin" --node-name local-node --state-dir "$dir/node" --port 0 --cpu 32 --memory 64Gi \
  --image-map "$(flow_image_map)" --kubeconfig "$KUBECONFIG" \
  --ca-cert "$dir/pki/ca.crt" --ca-key "$dir/pki/ca.key" >"$dir/node.log" 2>&1 &
node_pid=$!
deadline=$(( $(date +%s) + 60 ))
until [ -f "$dir/node/ready" ]; do
  kill -0 "$node_pid" 2>/dev/null || { tail -20 "$dir/node.log"; echo "demo: the node exited" >&2; exit 1; }
  [ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$dir/node.log"; echo "demo: node not ready in 60s" >&2; exit 1; }
  sleep 0.1
done
show kubectl wait --for=condition=Ready node/local-node --timeout=30s
show kubectl get nodes

phase "install the operator"
show helm install nccl-operator "$root/charts/nccl-operator" -n nccl-system --create-namespace
show kubectl -n nccl-system rollout status deployment/nccl-operator --timeout=90s
show kubectl get crd nccljobs.nccl.dev

phase "run the example job"
show kubectl apply -f "$root/deploy/examples/ncclJob.yaml"
ok=1
show kubectl wait nccljob/demo --for=jsonpath='{.status.state}'=Succeeded --timeout=120s || ok=0
show kubectl get nj
show kubectl get nj demo -o wide
show kubectl get nj demo -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'
show kubectl get events --field-selector involvedObject.kind=NcclJob,involvedObject.name=demo --sort-by=.metadata.creationTimestamp
show kubectl get pods -o wide
for i in 0 1 2 3; do show kubectl logs "demo-$i" -c trainer || ok=0; done
if [ "$ok" -ne 1 ]; then
  show kubectl describe nj demo || true
  show kubectl -n nccl-system logs deployment/nccl-operator --tail=40 || true
  echo "demo: the job did not succeed (node log: $dir/node.log)" >&2
  exit 1
fi
phase "the job succeeded"
if [ "$keep" -eq 1 ]; then
  echo "left running: source $dir/env; \$CONTROLPLANE_BIN/kubectl get nj"
  echo "stop: kill $node_pid (the node); tests/controlplane/controlplane.sh down --dir $dir"
  echo "demo took $(( $(date +%s) - t0 ))s"
fi
