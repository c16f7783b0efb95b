#!/usr/bin/env bash
# Time to communicator, runtime (through a real sidecar) against raw NCCL, sampled REPS times.
# Each repetition is a fresh process with its own sidecar and attempt (a sidecar serves one id per
# attempt) doing one untimed raw init, then one runtime and one raw init, alternating which comes
# first. Prints median / p10 / p90 of each, the per-process ratio runtime/raw and difference
# runtime - raw, and order-balanced estimates of both (the acceptance: difference <= 2 ms).
#   init-reps.sh BIN_DIR REPS [extra nccl-allreduce-bench args]
# BIN_DIR holds nccl-allreduce-bench and nccl-sidecar. Every process runs under `timeout`.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/standalone-sidecar.sh"
bin="${1:?usage: init-reps.sh BIN_DIR REPS [args]}"
reps="${2:?usage: init-reps.sh BIN_DIR REPS [args]}"
shift 2
gpus="${BENCH_GPUS:-2}"
logs=$(mktemp -d)
lines="${logs}/init.txt"
: >"${lines}"
for i in $(seq 1 "${reps}"); do
  order=""; [[ $((i % 2)) -eq 0 ]] && order="--runtime-first"
  if ! start_standalone_sidecar "${bin}/nccl-sidecar" "$i" "${gpus}" "${logs}/sidecar-$i.log"; then
    echo "rep $i: sidecar did not start"; cat "${logs}/sidecar-$i.log"; continue
  fi
  NCCLJOB_INDEX=0 NCCLJOB_WORLD_SIZE="${gpus}" NCCLJOB_GPUS_PER_POD="${gpus}" NCCLJOB_ATTEMPT="$i" \
    NCCLJOB_SIDECAR_URL="http://127.0.0.1:${sidecar_port}" NCCLJOB_INIT_TIMEOUT_SECONDS=60 NCCL_K8S_LOG_LEVEL=warn \
    timeout 60 "${bin}/nccl-allreduce-bench" --init-only --raw-inits 1 ${order} "$@" >"${logs}/bench-$i.log" 2>&1
  rc=$?
  if grep '^INIT' "${logs}/bench-$i.log" | tee -a "${lines}" | grep -q .; then :; else
    echo "rep $i: no sample (exit ${rc}):"; tail -5 "${logs}/bench-$i.log" | sed 's/^/  /'
  fi
  stop_standalone_sidecar
done
summarize() {  # summarize LABEL FIELD [FILTER]: median and p90 of a key=value field over INIT lines
  local label=$1 field=$2 filter=${3:-.}
  grep -- "${filter}" "${lines}" | grep -o "${field}=[-0-9.]*" | cut -d= -f2 | sort -g \
    | awk -v l="${label}" '{v[NR]=$1} END {if (NR==0) {print l": no samples"; exit}
        m=v[int((NR+1)/2)]; p10=v[int(NR*0.1+0.999)]; p90=v[int(NR*0.9+0.999)]
        printf "%-28s n=%-3d median %8.3f  p10 %8.3f  p90 %8.3f  min %8.3f  max %8.3f\n", l, NR, m, p10, p90, v[1], v[NR]}'
}
echo "# time to communicator over ${reps} processes (ms; ratio = runtime/raw within one process)"
summarize "raw" raw_ms
summarize "runtime (total)" runtime_ms
summarize "  runtime's NCCL init call" rt_init_ms
awk '{for (i=1;i<=NF;i++) {split($i,kv,"="); f[kv[1]]=kv[2]} if (f["raw_ms"]>0) printf "ratio=%.4f diff_ms=%.3f %s\n", f["runtime_ms"]/f["raw_ms"], f["runtime_ms"]-f["raw_ms"], $2}' "${lines}" >"${logs}/ratios.txt"
lines="${logs}/ratios.txt"
summarize "runtime - raw (ms)" diff_ms
summarize "runtime - raw, raw first" diff_ms order=raw-first
summarize "runtime - raw, runtime first" diff_ms order=runtime-first
summarize "ratio runtime/raw" ratio
summarize "ratio, raw first" ratio order=raw-first
summarize "ratio, runtime first" ratio order=runtime-first
# Order-balanced estimate: the second init in a process is faster whichever path it is, so the
# geometric mean of the two orders' median ratios cancels that bias (it equals the ratio when
# there is no order effect).
# The same for the difference: the mean of the two orders' medians.
order_median() {  # order_median ORDER FIELD: median FIELD of that order ("" when none)
  grep -- "order=$1" "${lines}" | grep -o "$2=[-0-9.]*" | cut -d= -f2 | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}
first=$(order_median raw-first ratio); second=$(order_median runtime-first ratio)
dfirst=$(order_median raw-first diff_ms); dsecond=$(order_median runtime-first diff_ms)
if [[ -n "$first" && -n "$second" ]]; then
  awk -v a="$first" -v b="$second" 'BEGIN {printf "order-balanced ratio sqrt(raw-first median x runtime-first median) = sqrt(%.3f x %.3f) = %.3f\n", a, b, sqrt(a*b)}'
  awk -v a="$dfirst" -v b="$dsecond" 'BEGIN {printf "order-balanced runtime - raw = (raw-first median + runtime-first median) / 2 = (%.3f + %.3f) / 2 = %.3f ms\n", a, b, (a+b)/2}'
else
  echo "order-balanced ratio and difference: need samples of both orders"
fi
