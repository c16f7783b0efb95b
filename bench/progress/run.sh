#!/usr/bin/env bash
# What progress reports cost: a standalone root sidecar (8 GPUs a pod, the stall watch on) idle,
# with 8 ranks reporting once a second, and under bursts from one sender; its CPU time (utime +
# stime from /proc) and memory (VmRSS, VmHWM) per phase. Then the trainer's side: ns per
# nccl_k8s::ReportProgress over 1M calls, with the sidecar listening and with nothing on the port.
#
#   bench/progress/run.sh [--build DIR] [--seconds S] [--burst-seconds S] [--calls N]
# Defaults: 60 s idle and 60 s of 8 ranks, 10 s per burst, 1000000 calls.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build"
seconds=60
burst_seconds=10
calls=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --burst-seconds) burst_seconds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
sidecar="$build/sidecar/nccl-sidecar"
bench="$build/bench/progress/progress_bench"
for program in "$sidecar" "$bench"; do
  [ -x "$program" ] || { echo "run.sh: $program is missing; cmake --build $build --target nccl-sidecar progress_bench" >&2; exit 2; }
done
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

export NCCLJOB_NAME=bench NCCLJOB_INDEX=0 NCCLJOB_REPLICAS=1 NCCLJOB_GPUS_PER_POD=8 NCCLJOB_WORLD_SIZE=8 NCCLJOB_ATTEMPT=1
"$sidecar" --standalone --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --log-format json \
  --stall-timeout-seconds=3600 --termination-log "$work/termination-log" 2>"$work/sidecar.log" &
pid=$!
port=
for _ in $(seq 200); do
  port=$(grep '"msg":"started"' "$work/sidecar.log" | sed -n 's/.*"listen":"127.0.0.1:\([0-9]*\)".*/\1/p')
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "run.sh: the sidecar did not start:" >&2; cat "$work/sidecar.log" >&2; exit 1; }
export NCCLJOB_SIDECAR_URL="http://127.0.0.1:$port"
hz=$(getconf CLK_TCK)

cpu_ms() { awk -v hz="$hz" '{print ($14 + $15) * 1000 / hz}' "/proc/$pid/stat"; }
status_kb() { awk -v key="$1:" '$1 == key {print $2}' "/proc/$pid/status"; }
received() {
  python3 -c "import json,urllib.request; print(json.load(urllib.request.urlopen('$NCCLJOB_SIDECAR_URL/v1/progress'))['received'])"
}

printf '%-34s %8s %10s %10s %9s %7s %9s %9s\n' phase seconds sent received cpu_ms cpu_% rss_kB hwm_kB
phase() {  # NAME SECONDS COMMAND...: one row
  local name=$1 secs=$2; shift 2
  local cpu0 got0 t0 sent
  cpu0=$(cpu_ms); got0=$(received); t0=$(date +%s.%N)
  sent=$("$@" | sed -n 's/.*\(reports\|sent\)=\([0-9]*\).*/\2/p')
  local took cpu got
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  sleep 0.5  # what the sidecar still has queued is counted in its phase
  cpu=$(echo "$(cpu_ms) - $cpu0" | bc); got=$(( $(received) - got0 ))
  printf '%-34s %8.1f %10s %10s %9.0f %7.2f %9s %9s\n' "$name" "$took" "${sent:-0}" "$got" "$cpu" \
    "$(echo "$cpu / ($took * 10)" | bc -l)" "$(status_kb VmRSS)" "$(status_kb VmHWM)"
}
phase "idle" "$seconds" sleep "$seconds"
phase "8 ranks, one report a second each" "$seconds" "$bench" ranks 8 "$seconds"
phase "burst, 100k reports/s" "$burst_seconds" "$bench" burst 100000 "$burst_seconds"
phase "burst, as fast as one sender can" "$burst_seconds" "$bench" burst 0 "$burst_seconds"
dropped=$(python3 -c "import json,urllib.request; print(json.load(urllib.request.urlopen('$NCCLJOB_SIDECAR_URL/v1/progress'))['dropped'])")
echo "# sidecar dropped (refused) $dropped datagrams; sent - received = lost in the kernel's socket buffer"

echo
printf '%-40s %12s\n' "trainer side (nccl_k8s::ReportProgress)" ns_per_call
printf '%-40s %12s\n' "sidecar listening" "$("$bench" calls "$calls" | sed -n 's/.*ns_per_call=\([0-9]*\).*/\1/p')"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
printf '%-40s %12s\n' "nothing on the port" "$("$bench" calls "$calls" | sed -n 's/.*ns_per_call=\([0-9]*\).*/\1/p')"
unset NCCLJOB_SIDECAR_URL
printf '%-40s %12s\n' "no NcclJob env (a no-op)" "$(env -u NCCLJOB_INDEX "$bench" calls "$calls" | sed -n 's/.*ns_per_call=\([0-9]*\).*/\1/p')"
