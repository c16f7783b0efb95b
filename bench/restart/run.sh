#!/usr/bin/env bash
# Time to recover on the real node (tests/harness/realnode: a real kubelet, containerd, runc,
# kube-scheduler, the images of deploy/docker/Dockerfile, the operator installed by Helm): from a
# rank's SIGKILL to every trainer of the next attempt holding that attempt's id, for each
# restartStrategy and job size, over consecutive restarts of one job.
#
#   bench/restart/run.sh [--samples N] [--pods 4,8] [--strategies InPlace,Recreate] [--kills 3]
#
# Each sample is a fresh job (maxRestarts 100, backoffSeconds 0) whose trainers
# (nccl-allreduce --linger-seconds 3600) wait after the id; kill k (1..--kills) SIGKILLs pod 1's
# trainer on the node once every trainer of attempt k logged its id, and ends when every trainer
# logged the id of attempt k+1. The time is the latest of those log lines' timestamps (the
# kubelet's, this machine's clock) minus the moment of the kill. Prints one line per kill and a
# table of p50/p99/min/max per strategy, size and kill. Needs root; brings the real node up and
# down (REALNODE_KEEP=1 leaves it). Env: NCCLOP_BUILD_DIR (default build/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${NCCLOP_BUILD_DIR:-$root/build}
samples=10 pods_list=4,8 strategies=InPlace,Recreate kills=3
while [ $# -gt 0 ]; do
  case $1 in
    --samples) samples=$2; shift 2 ;;
    --pods) pods_list=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    --kills) kills=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (a real kubelet)" >&2; exit 1; }
dir="$build/realnode"
# shellcheck source=../../tests/e2e/realnode/lib.sh
source "$root/tests/e2e/realnode/lib.sh"
cleanup() {
  [ "${REALNODE_KEEP:-0}" = 1 ] && return
  "$root/tests/harness/realnode/realnode.sh" down --dir "$dir" >/dev/null 2>&1 || true
  rn_images_down
}
trap cleanup EXIT
rn_images_up "$build/realnode-images"
rn_node_up "$dir" >/dev/null
# shellcheck source=/dev/null
source "$dir/env"
export PATH="$CONTROLPLANE_BIN:$PATH"
export HELM_CACHE_HOME="$dir/helm/cache" HELM_CONFIG_HOME="$dir/helm/config" HELM_DATA_HOME="$dir/helm/data"
kubectl -n nccl-system get deployment nccl-operator >/dev/null 2>&1 || rn_helm_install
ns=restart-bench
kubectl create namespace "$ns" >/dev/null 2>&1 || true

pid_of() {  # pid_of <pod> <container>
  local id
  id=$(kubectl -n "$ns" get pod "$1" -o jsonpath="{.status.containerStatuses[?(@.name==\"$2\")].containerID}")
  $REALNODE_CTR tasks ls 2>/dev/null | awk -v id="${id#containerd://}" '$1 == id && $3 == "RUNNING" {print $2}'
}
# The latest timestamp (epoch s) of the trainers' "attempt <a>, ... obtained" lines, once every
# pod of the job has one; empty before.
ids_held_at() {  # ids_held_at <job> <pods> <attempt>
  local job=$1 n=$2 a=$3 i line latest=0 t
  for ((i = 0; i < n; i++)); do
    line=$(kubectl -n "$ns" logs "$job-$i" -c trainer --timestamps 2>/dev/null | grep -m1 "attempt $a, .*obtained" || true)
    [ -n "$line" ] || return 0
    t=$(date -d "${line%% *}" +%s.%N)
    latest=$(python3 -c 'import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))' "$latest" "$t")
  done
  echo "$latest"
}
wait_ids() {  # wait_ids <job> <pods> <attempt> <timeout s>: prints the time every trainer held the id
  local deadline=$(( $(date +%s) + $4 )) at
  while [ "$(date +%s)" -lt "$deadline" ]; do
    at=$(ids_held_at "$1" "$2" "$3")
    [ -n "$at" ] && { echo "$at"; return 0; }
    sleep 0.3
  done
  echo "$1: not every trainer logged the id of attempt $3 within $4 s" >&2
  return 1
}

results=$(mktemp)
for strategy in ${strategies//,/ }; do
  for n in ${pods_list//,/ }; do
    for ((s = 1; s <= samples; s++)); do
      job=r$(tr 'A-Z' 'a-z' <<<"${strategy:0:1}")$n-$s
      kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $job}
spec:
  replicas: $n
  gpusPerPod: 0
  failurePolicy: {maxRestarts: 100, backoffSeconds: 0, maxBackoffSeconds: 0, restartStrategy: $strategy}
  template:
    spec:
      containers:
        - name: trainer
          image: $TRAINER_IMAGE
          resources: {requests: {cpu: 10m}}
          command: [nccl-allreduce, --linger-seconds, "3600"]
YAML
      wait_ids "$job" "$n" 1 120 >/dev/null
      used=$(kubectl -n "$ns" get nccljob "$job" -o jsonpath='{.status.restartStrategy}')
      for ((k = 1; k <= kills; k++)); do
        victim=$(pid_of "$job-1" trainer)
        [ -n "$victim" ] || { echo "no running trainer in $job-1" >&2; exit 1; }
        t0=$(date +%s.%N)
        kill -9 "$victim"
        t1=$(wait_ids "$job" "$n" $((k + 1)) 180)
        secs=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t0" "$t1")
        echo "$strategy $n $k $secs" >>"$results"
        echo "$(date -u +%FT%TZ) $job ($used, $n pods) kill $k: every trainer held the id of attempt $((k + 1)) after $secs s"
      done
      kubectl -n "$ns" delete nccljob "$job" --wait=false >/dev/null
      rn_wait 120 "$ns" pods "{.items[*].metadata.name}" "" >/dev/null 2>&1 || true
    done
  done
done
echo
python3 - "$results" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    strategy, n, k, secs = line.split()
    rows.setdefault((strategy, int(n), int(k)), []).append(float(secs))
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
print("| strategy | pods | restart | samples | p50 (s) | p99 (s) | min (s) | max (s) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for (strategy, n, k), xs in sorted(rows.items()):
    print(f"| {strategy} | {n} | {k} | {len(xs)} | {statistics.median(xs):.2f} | {pct(xs, 0.99):.2f} | {min(xs):.2f} | {max(xs):.2f} |")
PY
rm -f "$results"
