#!/usr/bin/env bash
# Time to recover on the real node (tests/harness/realnode: a real kubelet, containerd, runc,
# kube-scheduler, the images of deploy/docker/Dockerfile, the operator installed by Helm): from a
# rank's SIGKILL to every trainer of the next attempt holding that attempt, for each restart
# strategy, kubelet setting and job size, over consecutive restarts of one job.
#
#   bench/restart/run.sh [--samples N] [--pods 4,8] [--strategies InPlace,Recreate,JobSetInPlace]
#                        [--kubelet default,EventedPLEG] [--kills 3] [--kill one|all] [--out FILE]
#                        [--timeline] [--status-writes]
#   bench/restart/run.sh --table FILE...   the tables of the sample lines of earlier runs
#
# InPlace and Recreate: an NcclJob of that failurePolicy.restartStrategy whose trainers
# (nccl-allreduce --linger-seconds 3600) log "attempt k, ... obtained" once they hold attempt k's
# NCCL id (the root made and posted it, the operator published it, each sidecar served it).
# JobSetInPlace: a JobSet of JobSet v0.12.0's InPlaceRestart (bench/restart/jobset.sh: its
# controller and agent set up as its example says): attempt k is held when every pod's agent has
# recorded it (the pod's attempt annotation) and every trainer started again after the kill (its
# barrier lifts only then); the trainers' start lines give the time. --kubelet: default, or a
# kubelet feature gate turned on (EventedPLEG); the kubelet restarts between settings
# (realnode.sh kubelet).
#
# Each sample is a fresh job (maxRestarts 100, backoff 0); kill k (1..--kills) SIGKILLs pod 1's
# trainer (--kill all: every pod's trainer at once, as when every rank ends on a lost peer) on the
# node once every trainer held attempt k and ends when every trainer holds attempt k+1. The time
# is the latest of the trainers' lines' timestamps (the CRI log's, this machine's clock) minus the
# moment of the kill. Sample s runs every kubelet setting, size and strategy once, the strategies'
# order rotating with s (the kubelet settings' reversed every other sample). Prints a line per
# kill, appends "<strategy> <kubelet> <pods> <kill> <seconds>" to --out (default: a temporary
# file), then the tables (table.py) of every line in it, so runs add up. --timeline: after each
# kill, where its time went (timeline.py: the kubelet's, containers' and JobSet's log lines in
# order). --status-writes: also the pods' status writes each kill cost (the API server's count of
# pods/status PATCHes, on this node the kubelet's alone, from before the kill until every pod of the
# job is Ready again), per pod; what bench/scale's kubelet_inplace.py plays on KWOK's nodes.
# Needs root; brings the real node up and down (REALNODE_KEEP=1 leaves it). Env:
# NCCLOP_BUILD_DIR (default build/), NCCLOP_IMAGES_DIR (a registry.env of images already built).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${NCCLOP_BUILD_DIR:-$root/build}
samples=10 pods_list=4,8 strategies=InPlace,Recreate,JobSetInPlace kubelets=default kills=3 kill_mode=one out="" timeline=0 status_writes=0
while [ $# -gt 0 ]; do
  case $1 in
    --samples) samples=$2; shift 2 ;;
    --pods) pods_list=$2; shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    --kubelet) kubelets=$2; shift 2 ;;
    --kills) kills=$2; shift 2 ;;
    --kill) kill_mode=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeline) timeline=1; shift ;;
    --status-writes) status_writes=1; shift ;;
    --table) shift; exec python3 "$here/table.py" "$@" ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
for s in ${strategies//,/ }; do
  case $s in InPlace|Recreate|JobSetInPlace) ;; *) echo "run.sh: unknown strategy $s" >&2; exit 2 ;; esac
done
case $kill_mode in one|all) ;; *) echo "run.sh: --kill one or all, not $kill_mode" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "run.sh: needs root (a real kubelet)" >&2; exit 1; }
own_out=0
[ -n "$out" ] || { out=$(mktemp); own_out=1; }
unset REALNODE_KUBELET_FEATURE_GATES  # the node comes up with the default kubelet
dir="$build/realnode"
work=$(mktemp -d)
# shellcheck source=../../tests/e2e/realnode/lib.sh
source "$root/tests/e2e/realnode/lib.sh"
# shellcheck source=jobset.sh
source "$here/jobset.sh"
cleanup() {
  js_down
  rm -rf "$work"
  [ "${REALNODE_KEEP:-0}" = 1 ] && return
  "$root/tests/harness/realnode/realnode.sh" down --dir "$dir" >/dev/null 2>&1 || true
  rn_images_down
}
trap cleanup EXIT
rn_images_up "$build/realnode-images"
images_dir=${NCCLOP_IMAGES_DIR:-}
[ -f "$images_dir/registry.env" ] || images_dir=$build/realnode-images
rn_node_up "$dir" >/dev/null
# shellcheck source=/dev/null
source "$dir/env"
export PATH="$CONTROLPLANE_BIN:$PATH"
export HELM_CACHE_HOME="$dir/helm/cache" HELM_CONFIG_HOME="$dir/helm/config" HELM_DATA_HOME="$dir/helm/data"
kubectl -n nccl-system get deployment nccl-operator >/dev/null 2>&1 || rn_helm_install
ns=restart-bench
kubectl create namespace "$ns" >/dev/null 2>&1 || true
case ",$strategies," in *,JobSetInPlace,*) js_up "$work" "$images_dir" ;; esac

kubelet_now=default kubelet_used=0
use_kubelet() {  # use_kubelet <default|GATE>: restart the kubelet with that gate on, unless it runs so
  [ "$1" = "$kubelet_now" ] && return 0
  if [ "$kubelet_used" = 1 ]; then kubelet_evidence; fi
  local gates=""
  [ "$1" = default ] || gates="$1=true"
  REALNODE_KUBELET_FEATURE_GATES=$gates "$root/tests/harness/realnode/realnode.sh" kubelet --dir "$dir" >/dev/null
  kubelet_now=$1 kubelet_used=0
}
# What the kubelet of the current setting saw since it started (its metrics reset on a restart):
# CRI event streams opened and events received (EventedPLEG), single-pod relists (on demand).
kubelet_evidence() {
  kubectl get --raw "/api/v1/nodes/$REALNODE_NAME/proxy/metrics" 2>/dev/null | awk -v kb="$kubelet_now" '
    /^kubelet_evented_pleg_connection_success_count / {conn = $2}
    /^kubelet_evented_pleg_connection_error_count / {err = $2}
    /^kubelet_evented_pleg_connection_latency_seconds_count / {events = $2}
    /^kubelet_pleg_pod_relist_duration_seconds_count / {relists = $2}
    END {printf "kubelet %s: CRI event streams %d (errors %d), CRI events %d, single-pod relists %d\n",
         kb, conn, err, events, relists}' || true
}

# The pod of completion index <i>.
pod_name() {  # pod_name <strategy> <job> <i>
  if [ "$1" = JobSetInPlace ]; then js_pod "$2" "$3"; else echo "$2-$3"; fi
}
pid_of() {  # pid_of <pod> <container>: the container's first process on the node
  local id pid="" deadline=$(( $(date +%s) + 30 ))
  # The pod's status may name the container a moment after it logged (the kubelet under load).
  while [ -z "$pid" ] && [ "$(date +%s)" -lt "$deadline" ]; do
    id=$(kubectl -n "$ns" get pod "$1" -o jsonpath="{.status.containerStatuses[?(@.name==\"$2\")].containerID}" 2>/dev/null || true)
    pid=$($REALNODE_CTR tasks ls 2>/dev/null | awk -v id="${id#containerd://}" '$1 == id && $3 == "RUNNING" {print $2}')
    [ -n "$pid" ] || sleep 0.2
  done
  echo "$pid"
}
# The trainers' log files on the node (every container the pod had), read without the API: the
# polls stay light on the node they measure.
trainer_logs() {  # trainer_logs <strategy> <job> <i>
  if [ "$1" = JobSetInPlace ]; then echo /var/log/pods/"${ns}_$2-w-0-$3"-*_*/trainer/*.log
  else echo /var/log/pods/"${ns}_$2-$3"_*/trainer/*.log; fi
}
# The latest timestamp (epoch s) of the trainers' lines that say they hold attempt <a>, once every
# pod of the job has one; empty before. NcclJob: "attempt <a>, ... obtained" (nccl-allreduce, once
# it holds attempt a's id). JobSet: every pod's attempt annotation is a - 1 (JobSet counts from 0)
# and every pod's trainer started after <since> (its barrier lifted only once every pod's agent
# recorded that attempt); its line ("trainer started") gives the time.
held_at() {  # held_at <strategy> <job> <pods> <attempt> <since (epoch s)>
  local i line latest=0 t files
  if [ "$1" = JobSetInPlace ]; then
    [ "$(js_attempts "$2" | grep -cx "$(( $4 - 1 ))")" = "$3" ] || return 0
  fi
  for ((i = 0; i < $3; i++)); do
    files=$(trainer_logs "$1" "$2" "$i")
    # shellcheck disable=SC2086
    if [ "$1" = JobSetInPlace ]; then  # the newest container's line: <restart count>.log
      line=$(grep -h "trainer started" "$(ls -v $files 2>/dev/null | tail -1)" 2>/dev/null | tail -1 || true)
    else line=$(grep -h -m1 "attempt $4, .*obtained" $files 2>/dev/null | head -1 || true); fi
    [ -n "$line" ] || return 0
    t=$(date -d "${line%% *}" +%s.%N)
    awk -v t="$t" -v s="$5" 'BEGIN {exit !(t > s)}' || return 0
    latest=$(awk -v a="$latest" -v b="$t" 'BEGIN {print (b > a ? b : a)}')
  done
  echo "$latest"
}
wait_held() {  # wait_held <strategy> <job> <pods> <attempt> <since> <timeout s>: prints when every trainer held it
  local deadline=$(( $(date +%s) + $6 )) at
  while [ "$(date +%s)" -lt "$deadline" ]; do
    at=$(held_at "$1" "$2" "$3" "$4" "$5")
    [ -n "$at" ] && { echo "$at"; return 0; }
    sleep 0.3
  done
  echo "$2: not every trainer held attempt $4 within $6 s" >&2
  return 1
}

ncclop_manifest() {  # ncclop_manifest <name> <pods> <strategy>
  cat <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1}
spec:
  replicas: $2
  gpusPerPod: 0
  failurePolicy: {maxRestarts: 100, backoffSeconds: 0, maxBackoffSeconds: 0, restartStrategy: $3}
  template:
    spec:
      containers:
        - name: trainer
          image: $TRAINER_IMAGE
          resources: {requests: {cpu: 10m}}
          command: [nccl-allreduce, --linger-seconds, "3600"]
YAML
}

# The API server's count of pod status PATCHes so far, every client's (on this node: the kubelet's).
pod_status_patches() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total[{]/ && /resource="pods"/ && /subresource="status"/ &&
    /verb="PATCH"/ {n += $NF} END {printf "%d\n", n}'
}

show_timeline() {  # show_timeline <strategy> <job> <kill time> <seconds>
  local pods=$2- extra=()
  if [ "$1" = JobSetInPlace ]; then pods=$2-w- extra=(--jobset-log "$work/jobset-manager.log"); fi
  python3 "$here/timeline.py" --t0 "$3" --pods "$pods" --ns "$ns" --kubelet-log "$dir/logs/kubelet.log" \
    --window "$(awk -v s="$4" 'BEGIN {print s + 0.5}')" "${extra[@]}" | sed 's/^/    /' || true
}

one_sample() {  # one_sample <strategy> <kubelet> <pods> <job>
  local strategy=$1 kubelet=$2 n=$3 job=$4 k t0 t1 secs kind w0 w1
  kubelet_used=1
  if [ "$strategy" = JobSetInPlace ]; then
    kind=jobset; js_manifest "$job" "$n" | kubectl -n "$ns" apply -f - >/dev/null
  else
    kind=nccljob; ncclop_manifest "$job" "$n" "$strategy" | kubectl -n "$ns" apply -f - >/dev/null
  fi
  wait_held "$strategy" "$job" "$n" 1 0 180 >/dev/null
  local victims pod i
  for ((k = 1; k <= kills; k++)); do
    victims=()
    for i in $(if [ "$kill_mode" = all ]; then seq 0 $((n - 1)); else echo 1; fi); do
      pod=$(pod_name "$strategy" "$job" "$i")
      victims+=("$(pid_of "$pod" trainer)")
      [ -n "${victims[-1]}" ] || { echo "no running trainer in $pod" >&2; exit 1; }
    done
    [ "$status_writes" = 1 ] && w0=$(pod_status_patches)
    t0=$(date +%s.%N)
    kill -9 "${victims[@]}"
    t1=$(wait_held "$strategy" "$job" "$n" $((k + 1)) "$t0" 180)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    echo "$strategy $kubelet $n $k $secs" >>"$out"
    echo "$(date -u +%FT%TZ) $job ($strategy, kubelet $kubelet, $n pods) kill $k ($kill_mode): every trainer held attempt $((k + 1)) after $secs s (load $(cut -d' ' -f1 /proc/loadavg))"
    if [ "$status_writes" = 1 ] && [ "$strategy" != JobSetInPlace ]; then
      kubectl -n "$ns" wait --for=condition=Ready pod -l "nccl.dev/job-name=$job" --timeout=120s >/dev/null
      w1=$(pod_status_patches)
      echo "  pod status writes: $((w1 - w0)) for $n pods ($(awk -v w=$((w1 - w0)) -v n="$n" 'BEGIN {printf "%.2f", w / n}') a pod)"
    fi
    if [ "$timeline" = 1 ]; then show_timeline "$strategy" "$job" "$t0" "$secs"; fi
  done
  kubectl -n "$ns" delete "$kind" "$job" --wait=false >/dev/null
  rn_wait 180 "$ns" pods "{.items[*].metadata.name}" "" >/dev/null 2>&1 || true
}

read -r -a strategy_list <<<"${strategies//,/ }"
read -r -a kubelet_list <<<"${kubelets//,/ }"
tag() { case $1 in InPlace) echo i ;; Recreate) echo r ;; JobSetInPlace) echo j ;; esac; }
run_id=$(date +%H%M%S)
for ((s = 1; s <= samples; s++)); do
  # Every other sample takes the kubelet settings in reverse: one kubelet restart per sample.
  for ((b = 0; b < ${#kubelet_list[@]}; b++)); do
    if ((s % 2)); then kubelet=${kubelet_list[$b]}; else kubelet=${kubelet_list[$(( ${#kubelet_list[@]} - 1 - b ))]}; fi
    use_kubelet "$kubelet"
    for n in ${pods_list//,/ }; do
      for ((i = 0; i < ${#strategy_list[@]}; i++)); do
        strategy=${strategy_list[$(( (i + s - 1) % ${#strategy_list[@]} ))]}
        one_sample "$strategy" "$kubelet" "$n" "r$(tag "$strategy")$n-$(tr 'A-Z' 'a-z' <<<"${kubelet:0:1}")-$run_id-$s"
      done
    done
  done
done
kubelet_evidence
echo
python3 "$here/table.py" "$out"
if [ "$own_out" = 1 ]; then rm -f "$out"; fi
