#!/usr/bin/env bash
# Measures the images in their containers on the real node (numbers for
# tests/harness/realnode/RESULTS.md; a program that prints a table, not a test):
#   - time from `kubectl apply` of the example job (deploy/examples/ncclJob.yaml, 4 pods) to all
#     4 trainers started: first on the fresh node (the trainer image is pulled), then again;
#   - sidecar memory in its running container while it watches (a 2-pod job whose trainers
#     linger): the process's VmRSS read from the node (/proc/<pid>/status), and its container's
#     memory cgroup (usage; rss + mapped_file of memory.stat);
#   - operator memory in its container: idle, then with N NcclJobs x R pods (default 100 x 8).
#     The node cannot run 800 pods (2 CPUs, maxPods 110), so these jobs ask 8 GPUs a pod, which it
#     has none of: the pods exist and stay Pending (Unschedulable), as in bench/operator/rss.sh;
#     the operator watches and caches all of them and their jobs, Services and ConfigMaps.
#   tests/harness/realnode/measure.sh [--build DIR] [--jobs N] [--replicas R]
#   tests/harness/realnode/measure.sh --testnode [--build DIR]   the same apply-to-trainers time on
#                                         testnode (scripts/demo.sh --keep's node), for comparison
# Each leaves a finished example pod's YAML in DIR/measure-{realnode,testnode}-pod.yaml.
# Needs root. Uses the images of tests/harness/images/build.sh (NCCLOP_IMAGES_DIR, else
# builds/starts them in DIR/measure-images) and a real node in DIR/realnode-measure (stopped at the
# end).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$root/build
jobs=100
replicas=8
testnode=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --testnode) testnode=1; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
    *) echo "measure.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "measure.sh: needs root" >&2; exit 1; }
mkdir -p "$build"; build=$(cd "$build" && pwd)
# shellcheck source=../../e2e/realnode/lib.sh
source "$root/tests/e2e/realnode/lib.sh"
# shellcheck source=../../../bench/operator/lib.sh
source "$root/bench/operator/lib.sh"
row() { printf '%-62s %s\n' "$1" "$2"; }

# Applies the example job in a new namespace; prints the seconds until its 4 trainers started.
example_run() {  # example_run <namespace> <job file>
  kubectl create namespace "$1" >/dev/null
  local t; t=$(date +%s.%N)
  kubectl -n "$1" apply -f "$2" >/dev/null
  rn_seconds_to_trainers "$1" demo 4 "$t" 300
  rn_wait 120 "$1" nccljob/demo '{.status.state}' Succeeded
}

if [ "$testnode" = 1 ]; then
  demo_dir="$build/measure-testnode"
  "$root/scripts/demo.sh" --keep --no-build --dir "$demo_dir" --build-dir "$build" >"$build/measure-testnode.log" 2>&1 \
    || { tail -30 "$build/measure-testnode.log" >&2; exit 1; }
  trap '"$root/scripts/demo.sh" --down --dir "$demo_dir" >/dev/null 2>&1 || true' EXIT
  # shellcheck source=/dev/null
  source "$demo_dir/env"
  export PATH="$CONTROLPLANE_BIN:$PATH"
  row "testnode: kubectl apply -> 4 trainers started, run 1 (s)" "$(example_run m1 "$root/deploy/examples/ncclJob.yaml")"
  row "testnode: kubectl apply -> 4 trainers started, run 2 (s)" "$(example_run m2 "$root/deploy/examples/ncclJob.yaml")"
  kubectl -n m2 get pod demo-1 -o yaml >"$build/measure-testnode-pod.yaml"
  exit 0
fi

dir="$build/realnode-measure"
trap '"$root/tests/harness/realnode/realnode.sh" down --dir "$dir" >/dev/null 2>&1 || true; rn_images_down' EXIT
rn_images_up "$build/measure-images"
rn_node_up "$dir"
# shellcheck source=/dev/null
source "$dir/env"
export PATH="$CONTROLPLANE_BIN:$PATH"

# pid of a container's first process on the node
pid_of() {  # pid_of <namespace> <pod> <container>
  local id
  id=$(kubectl -n "$1" get pod "$2" -o jsonpath="{.status.containerStatuses[?(@.name==\"$3\")].containerID}{.status.initContainerStatuses[?(@.name==\"$3\")].containerID}")
  $REALNODE_CTR tasks ls 2>/dev/null | awk -v id="${id#containerd://}" '$1 == id {print $2}'
}
# The container's memory cgroup (v1 on this host): usage, and rss + mapped_file, in MiB.
cgroup_mem() {  # cgroup_mem <pid>
  local cg; cg=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" {print $3}' "/proc/$1/cgroup")
  awk -v u="$(cat "$cg/memory.usage_in_bytes")" '$1 == "rss" {r = $2} $1 == "mapped_file" {m = $2}
    END {printf "usage %.1f, rss+mapped_file %.1f", u / 1048576, (r + m) / 1048576}' "$cg/memory.stat"
}

rn_helm_install
op_pod=$(kubectl -n nccl-system get pods -o jsonpath='{.items[0].metadata.name}')
op_pid=$(pid_of nccl-system "$op_pod" operator)
rn_example_job >"$dir/ncclJob.yaml"
row "real node: kubectl apply -> 4 trainers started, image pulled (s)" "$(example_run m1 "$dir/ncclJob.yaml")"
row "real node: kubectl apply -> 4 trainers started, image present (s)" "$(example_run m2 "$dir/ncclJob.yaml")"
# A finished pod as each node reports it, to compare (testnode: --testnode).
kubectl -n m2 get pod demo-1 -o yaml >"$build/measure-realnode-pod.yaml"

# Sidecars while they watch: 2 pods whose trainers linger after getting the id.
kubectl create namespace side >/dev/null
kubectl -n side apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: watch}
spec:
  replicas: 2
  gpusPerPod: 0
  template:
    spec:
      containers:
        - {name: trainer, image: $TRAINER_IMAGE, command: [nccl-allreduce, --linger-seconds, "300"], resources: {requests: {cpu: 50m}}}
YAML
rn_wait 120 side nccljob/watch '{.status.state}' Running
deadline=$(( $(date +%s) + 60 ))
until kubectl -n side logs watch-1 -c trainer 2>/dev/null | grep -q "id obtained"; do
  [ "$(date +%s)" -lt "$deadline" ] || { echo "watch-1 got no id" >&2; exit 1; }
  sleep 0.3
done
for p in watch-0 watch-1; do
  pid=$(pid_of side "$p" nccl-sidecar)
  row "sidecar in $p (root: 0), watching: VmRSS MiB" "$(proc_mem "$pid")"
  row "  its container's memory cgroup (MiB)" "$(cgroup_mem "$pid")"
done
kubectl delete namespace side --wait=false >/dev/null

row "operator idle-ish (after 3 jobs): VmRSS MiB" "$(proc_mem "$op_pid")"
row "  its container's memory cgroup (MiB)" "$(cgroup_mem "$op_pid")"
kubectl create namespace load >/dev/null
start=$(date +%s.%N)
load_manifests "$jobs" "$replicas" "$TRAINER_IMAGE" | kubectl -n load apply -f - >/dev/null
want=$((jobs * replicas))
wait_pod_count 900 "$want" kubectl -n load get pods --no-headers || { echo "not all $want pods appeared" >&2; exit 1; }
row "operator: $want pods of $jobs jobs created (s)" "$(python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$start")"
# The scheduler marks each pod Unschedulable; the operator takes those updates in too.
wait_unschedulable() {
  local deadline=$(( $(date +%s) + 300 ))
  until [ "$(kubectl -n load get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}' | grep -c Unschedulable)" -ge "$want" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 2
  done
}
wait_unschedulable || echo "(not every pod was marked Unschedulable within 300 s)" >&2
row "operator at $jobs jobs x $replicas pods: VmRSS MiB" "$(proc_mem "$op_pid")"
row "  its container's memory cgroup (MiB)" "$(cgroup_mem "$op_pid")"
