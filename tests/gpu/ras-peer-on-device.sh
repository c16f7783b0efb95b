#!/usr/bin/env bash
# Two GPUs: a hung or a dead NCCL peer found through NCCL's health report (RAS) by the sidecar's
# reader and stall watch (the code pod 0's sidecar runs with failurePolicy.stallTimeoutSeconds).
# Two ranks of PyTorch's NCCL backend, one per GPU, all-reduce in a loop; once both train, rank 1
# is stopped (--case hang: SIGSTOP, alive but silent) or killed (--case dead: SIGKILL), and
# nccl-ras-report reads RAS every 2 s with the stall timeout given: the time from the fault to the
# first stall reason (NCCL's words) is measured, once per sample. Needs the nvidia-h200-x2 kind.
#
#   tests/gpu/ras-peer-on-device.sh --case hang|dead [--samples N] [--timeout-seconds T] [READER]
#
# READER defaults to build-ras/nccl-ras-report; prepare it here and carry build-ras:
#   cmake --build build --target nccl-ras-report && mkdir -p build-ras &&
#   strip -o build-ras/nccl-ras-report build/sidecar/nccl-ras-report
# Writes $OUT/ras-peer-<case>.txt (every read, every sample's time) and the trainers' logs. NCCL
# calls a peer dead after about 60 s of failed reconnects, so one dead sample takes ~90 s: keep
# --samples so that a call stays under the device's 10 minutes (hang 5, dead 5 fit in two calls).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case_name="" samples=5 timeout=10 reader="${repo}/build-ras/nccl-ras-report"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --case) case_name=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --timeout-seconds) timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) reader=$1; shift ;;
  esac
done
case "${case_name}" in hang) signal=STOP ;; dead) signal=KILL ;; *) echo "--case hang|dead" >&2; exit 2 ;; esac
out="${OUT:-/tmp/ras-out}"
mkdir -p "${out}"
exec > >(tee "${out}/ras-peer-${case_name}.txt") 2>&1
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
ranks=()
stop_ranks() { for pid in "${ranks[@]}"; do kill -CONT "${pid}" 2>/dev/null; kill -KILL "${pid}" 2>/dev/null; done; ranks=(); }
trap stop_ranks EXIT

# Rank r of 2 on GPU r: all-reduces (a checked sum) until killed; touches /tmp/ras-peer.<r> once trained.
start_rank() {  # rank sample
  local rank=$1 sample=$2
  rm -f "/tmp/ras-peer.${rank}"
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29600 + sample)) WORLD_SIZE=2 RANK=${rank} python3 -c "
import os, torch, torch.distributed as dist
r = ${rank}
dist.init_process_group('nccl', rank=r, world_size=2, device_id=torch.device('cuda', r))
x = torch.ones(1 << 20, device=torch.device('cuda', r))
n = 0
while True:
    x.fill_(r + 1); dist.all_reduce(x); n += 1
    if n % 100 == 0:
        torch.cuda.synchronize(r)
        assert x[0].item() == 3.0, x[0].item()
        if n == 100: print('rank', r, 'pid', os.getpid(), 'nccl', torch.cuda.nccl.version(), 'sum checked', flush=True); open('/tmp/ras-peer.${rank}', 'w').close()
" >"${out}/rank${rank}-${case_name}-${sample}.txt" 2>&1 &
  ranks+=($!)
}

step() { echo; echo "===== $*"; }
since() { awk -v a="$1" -v b="${fault}" 'BEGIN { printf "%.1f", a - b }'; }
step "machine"
date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
"${reader}" --version

times=()
for sample in $(seq 1 "${samples}"); do
  step "sample ${sample}: two ranks train, then SIG${signal} to rank 1"
  start_rank 0 "${sample}"; start_rank 1 "${sample}"
  for _ in $(seq 1 240); do [[ -e /tmp/ras-peer.0 && -e /tmp/ras-peer.1 ]] && break; sleep 0.5; done
  if ! [[ -e /tmp/ras-peer.0 && -e /tmp/ras-peer.1 ]]; then
    echo "the ranks did not train within 120 s"; tail -5 "${out}"/rank*-"${case_name}-${sample}".txt; stop_ranks; continue
  fi
  # A first read while both train: no reason.
  "${reader}" --timeout-seconds "${timeout}" | grep -E '^(===|--- stall reason)'
  fault=$(date +%s.%N)
  kill -"${signal}" "${ranks[1]}"
  found=""
  # Reads every 2 s for up to 150 s (a dead peer takes NCCL ~60 s, then the timeout).
  while IFS= read -r line; do
    now=$(date +%s.%N)
    printf '%7.1f s  %s\n' "$(since "${now}")" "${line}"
    case "${line}" in
      "--- stall reason: none") ;;
      "--- stall reason: "*) found=$(since "${now}"); break ;;
    esac
  done < <("${reader}" --count 75 --interval-seconds 2 --timeout-seconds "${timeout}" | grep --line-buffered -E '^(=== read|--- stall reason|.*(dead|unresponsive|missing|Missing|different))')
  if [[ -n "${found}" ]]; then times+=("${found}"); echo "sample ${sample}: stall reason ${found} s after SIG${signal}"; else echo "sample ${sample}: no stall reason within 150 s"; fi
  stop_ranks
  sleep 1
done

step "summary: ${case_name} (SIG${signal} to rank 1), stall timeout ${timeout} s, ${#times[@]} of ${samples} samples found"
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {if (NR) printf "fault to reason (s): min %.1f, median %.1f, max %.1f\n", a[1], a[int((NR+1)/2)], a[NR]}'
[[ ${#times[@]} -eq ${samples} ]] || { echo "FAILED: ${samples} samples asked, ${#times[@]} found"; exit 1; }
echo "ras-peer-on-device ${case_name}: all passed"
