#!/usr/bin/env bash
# The demo on a fresh machine: builds everything, starts the local control plane and a local
# node (tests/harness/node: pods run as processes in network namespaces; no Docker, no GPU),
# installs the operator with Helm, applies deploy/examples/ncclJob.yaml and shows the job succeed:
# kubectl get nj, its conditions, its events and every rank's log lines. Tears everything
# down at the end unless --keep (then: source DIR/env; $CONTROLPLANE_BIN/kubectl get nj;
# scripts/demo.sh --down).
#
#   scripts/demo.sh [--real-node] [--keep] [--dir DIR] [--build-dir DIR] [--no-build]
#   scripts/demo.sh --down [--dir DIR]
#     --real-node  run it on a real kubelet with containerd, runc, CNI, kube-scheduler, kube-proxy
#                  and CoreDNS (tests/harness/realnode, state in DIR/realnode), in containers of
#                  the images built from deploy/docker/Dockerfile (tests/harness/images, registry
#                  in DIR/images; a source change rebuilds their C++) and installed as the README
#                  says (needs root)
#     --keep       leave the control plane and the node running after the demo
#     --down       stop a demo that --keep left running in DIR (node, then control plane), exit
#     --dir        control plane and node state (default .demo); the node's pid is DIR/node.pid
#     --build-dir  the C++ build (default build, as scripts/test.sh)
#     --no-build   use the build as it is (needs nccl-operator, nccl-sidecar, nccl-allreduce)
#
# A demo still running in DIR (an earlier --keep) is stopped first, as --down does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.demo"
build="$root/build"
keep=0
down=0
real_node=0
setup_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --real-node) real_node=1; shift ;;
    --down) down=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --no-build) setup_flags+=(--no-build); shift ;;
    # The header comment, up to the first line that is not one.
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
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

cp_sh="$root/tests/harness/controlplane/controlplane.sh"
node_pid_file() { echo "$dir/node.pid"; }
# node_alive <pid>: the pid is still a testnode (not a number the kernel has reused). Reads /proc
# rather than kill -0, which fails with EPERM for a node that sudo started as root.
node_alive() {
  local cmdline
  [ -n "$1" ] && cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") && [[ "$cmdline" == *testnode* ]]
}
# node_of_dir: the pid of a testnode with state in $dir/node that no node.pid names (a demo
# kept by a version of this script that did not write one).
node_of_dir() {
  local f cmdline
  for f in /proc/[0-9]*/cmdline; do
    cmdline=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
    if [[ "$cmdline" == *testnode*" --state-dir $dir/node "* ]]; then f=${f#/proc/}; echo "${f%/cmdline}"; return; fi
  done
}
controlplane_running() {
  "$cp_sh" status --dir "$dir" >/dev/null 2>&1 && return 0
  local p
  for p in etcd apiserver controller-manager; do
    [ -f "$dir/$p.pid" ] && kill -0 "$(cat "$dir/$p.pid")" 2>/dev/null && return 0
  done
  return 1
}
# stop_demo <why>: stops what a demo runs in $dir. The node first, with SIGTERM, and waits for
# it: it stops its pods and deletes their network namespaces (and marks the Node NotReady,
# which needs the API server); then the control plane. Prints nothing when nothing runs.
stop_demo() {
  local why=$1 pid="" stopped=0
  [ -f "$(node_pid_file)" ] && pid=$(cat "$(node_pid_file)")
  node_alive "$pid" || pid=$(node_of_dir)
  if node_alive "$pid"; then
    echo "demo: $why: stopping the node (pid $pid, log $dir/node.log)"
    "${sudo[@]}" kill -TERM "$pid" 2>/dev/null || true
    # testnode gives its pods 15 s, then marks the Node NotReady (5 s at most).
    local deadline=$(( $(date +%s) + 45 ))
    while node_alive "$pid"; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo "demo: the node (pid $pid) did not stop in 45s after SIGTERM; killing it (pods' processes may be left; the next node removes stale netns)" >&2
        "${sudo[@]}" kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.2
    done
    stopped=1
  fi
  "${sudo[@]}" rm -f "$(node_pid_file)"
  if controlplane_running; then
    echo "demo: $why: stopping the control plane in $dir"
    "$cp_sh" down --dir "$dir"
    stopped=1
  fi
  [ "$stopped" -eq 1 ]
}
# The command that stops this demo, as a user would type it.
down_command() {
  local cmd="scripts/demo.sh --down"
  [ "$dir" = "$root/.demo" ] || cmd+=" --dir $dir"
  echo "$cmd"
}

if [ "$down" -eq 1 ]; then
  [ "$keep" -eq 0 ] && [ ${#setup_flags[@]} -eq 0 ] || { echo "demo.sh: --down takes only --dir" >&2; exit 2; }
  [ -d "$dir" ] || { echo "demo: nothing to stop: $dir does not exist"; exit 0; }
  dir=$(cd "$dir" && pwd)
  stopped_real=0
  if [ -f "$dir/realnode/env" ] || [ -f "$dir/realnode/kubelet.pid" ]; then
    echo "demo: --down: stopping the real node in $dir/realnode"
    "${sudo[@]}" "$root/tests/harness/realnode/realnode.sh" down --dir "$dir/realnode"; stopped_real=1
  fi
  if [ -f "$dir/images/registry.pid" ]; then
    echo "demo: --down: stopping the image registry in $dir/images"
    "${sudo[@]}" "$root/tests/harness/images/build.sh" down --dir "$dir/images"; stopped_real=1
  fi
  stop_demo "--down" || [ "$stopped_real" = 1 ] || echo "demo: nothing was running in $dir"
  exit 0
fi

phase "build (scripts/setup.sh: packages, NVIDIA wheels, control plane binaries, C++ build)"
"$root/scripts/setup.sh" --build-dir "$build" "${setup_flags[@]}"
mkdir -p "$build"; build=$(cd "$build" && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

# controlplane.sh up would replace a running control plane under an earlier demo's node, which
# would keep running against a dead API server and hold the bridge the new node needs.
if stop_demo "an earlier demo is still running in $dir"; then echo "demo: the earlier demo is stopped"; fi

# run_example <job file> <node log>: applies the example job, waits for Succeeded and shows what
# a user looks at; exits 1 when the job did not succeed.
run_example() {
  phase "run the example job"
  show kubectl apply -f "$1"
  local ok=1 i
  show kubectl wait nccljob/demo --for=jsonpath='{.status.state}'=Succeeded --timeout=120s || ok=0
  show kubectl get nj
  show kubectl get nj demo -o wide
  show kubectl get nj demo -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}'
  show kubectl get events --field-selector involvedObject.kind=NcclJob,involvedObject.name=demo
  show kubectl get pods -o wide
  for i in 0 1 2 3; do show kubectl logs "demo-$i" -c trainer || ok=0; done
  if [ "$ok" -ne 1 ]; then
    show kubectl describe nj demo || true
    show kubectl -n nccl-system logs deployment/nccl-operator --tail=40 || true
    echo "demo: the job did not succeed (node log: $2)" >&2
    exit 1
  fi
  phase "the job succeeded"
  [ "$keep" -eq 0 ] || echo "demo took $(( $(date +%s) - t0 ))s"
}

# The demo on a real node (--real-node): its own control plane and node in $dir/realnode, the
# images of deploy/docker/Dockerfile built by tests/harness/images/build.sh and served by its
# loopback registry ($dir/images), the README's install commands.
real_node_demo() {
  local rn="$root/tests/harness/realnode/realnode.sh"
  "$rn" down --dir "$dir/realnode" >/dev/null 2>&1 || true   # an earlier --keep
  # shellcheck source=../tests/e2e/realnode/lib.sh
  source "$root/tests/e2e/realnode/lib.sh"
  phase "images (tests/harness/images/build.sh: deploy/docker/Dockerfile built by BuildKit, pushed to a loopback registry; cached)"
  NCCLOP_IMAGES_DIR="" rn_images_up "$dir/images"
  cat "$dir/images/images.txt"
  if [ "$keep" -eq 1 ]; then
    trap 'echo "left running: source $dir/realnode/env; \$CONTROLPLANE_BIN/kubectl get nj"; echo "stop it: $(down_command)"' EXIT
  else
    trap 'phase "tear down"; "$rn" down --dir "$dir/realnode"; rn_images_down; echo "demo took $(( $(date +%s) - t0 ))s in all"' EXIT
  fi
  phase "real node (tests/harness/realnode: control plane, kubelet, containerd, runc, CNI, kube-scheduler, kube-proxy, CoreDNS)"
  rn_node_up "$dir/realnode"
  # shellcheck source=/dev/null
  source "$dir/realnode/env"
  export PATH="$CONTROLPLANE_BIN:$PATH"
  kubectl=$CONTROLPLANE_BIN/kubectl helm=$CONTROLPLANE_BIN/helm
  show kubectl get nodes -o wide
  phase "install the operator (the README's command; REG=$REG)"
  show helm install nccl-operator "$root/charts/nccl-operator" -n nccl-system --create-namespace \
    --set image.repository="$REG/nccl-operator" --set sidecarImage.repository="$REG/nccl-sidecar"
  show kubectl -n nccl-system rollout status deployment/nccl-operator --timeout=120s
  rn_example_job >"$dir/ncclJob.yaml"
  run_example "$dir/ncclJob.yaml" "$dir/realnode/logs/kubelet.log"
  exit 0
}
if [ "$real_node" -eq 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "demo.sh: --real-node needs root (a kubelet, containerd, interfaces): sudo scripts/demo.sh --real-node" >&2; exit 1; }
  real_node_demo
fi

phase "local control plane"
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
  stop_demo "tear down" || true
  if [ -n "$node_pid" ]; then wait "$node_pid" 2>/dev/null || true; fi
  echo "demo took $(( $(date +%s) - t0 ))s in all"
}
if [ "$keep" -eq 1 ]; then
  trap 'echo "left running: source $dir/env; \$CONTROLPLANE_BIN/kubectl get nj"; echo "stop it: $(down_command)"' EXIT
else
  trap teardown EXIT
fi

phase "local node (tests/harness/node; images map to $build)"
node_bin=$("$root/tests/harness/node/build.sh" | tail -1)
# A ready file left by an earlier run (--keep, or a node killed hard) would pass the wait below
# before this node has registered.
"${sudo[@]}" rm -f "$dir/node/ready"
# The shell writes its own pid, then becomes the node: node.pid is testnode's pid even under
# sudo, so a later --down (or the next run) signals the node itself.
"${sudo[@]}" bash -c 'echo $$ >"$1" && shift && exec "$@"' node "$(node_pid_file)" \
  "$node_bin" --node-name local-node --state-dir "$dir/node" --port 0 --cpu 32 --memory 64Gi \
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

run_example "$root/deploy/examples/ncclJob.yaml" "$dir/node.log"
