#!/usr/bin/env bash
# NCCL's health report (RAS) read by the sidecar's reader from a real NCCL on the GPU machine.
# One rank of PyTorch's NCCL backend all-reduces in a loop; nccl-ras-report reads RAS on
# localhost:28028 (JSON, then text) and must parse both; a second trainer in the same network
# namespace shows who answers when two processes hold the port (SO_REUSEPORT); after both exit
# the reader must say "unavailable". Writes $OUT/ras-on-device.txt and the trainers' logs.
#   tests/gpu/ras-on-device.sh [NCCL_RAS_REPORT]     (default build-ras/nccl-ras-report)
# Prepare here, then carry build-ras (sidecar/README.md, "NCCL's health report"):
#   cmake --build build --target nccl-ras-report && mkdir -p build-ras &&
#   strip -o build-ras/nccl-ras-report build/sidecar/nccl-ras-report
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
reader="${1:-${repo}/build-ras/nccl-ras-report}"
out="${OUT:-/tmp/ras-out}"
mkdir -p "${out}"
log="${out}/ras-on-device.txt"
exec > >(tee "${log}") 2>&1
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=RAS PYTHONUNBUFFERED=1
failed=""
trainers=()

step() { echo; echo "===== $*"; }
stop_trainers() {  # on an early exit
  for pid in "${trainers[@]}"; do kill "${pid}" 2>/dev/null; done
}
trap stop_trainers EXIT
finish_trainers() {  # each ends by itself (its loop's seconds), destroying its communicator
  for pid in "${trainers[@]}"; do wait "${pid}"; echo "trainer ${pid} exit $?"; done
  trainers=()
}

# One rank, world size 1: a communicator that stays alive, all-reducing until `seconds` pass.
# It touches $ready once NCCL has made its communicator (PyTorch makes it at the first collective).
start_trainer() {  # name master_port seconds
  local name=$1 port=$2 seconds=$3
  rm -f "/tmp/${name}.ready"
  MASTER_ADDR=127.0.0.1 MASTER_PORT=${port} WORLD_SIZE=1 RANK=0 timeout $((seconds + 60)) python3 -c "
import os, time, torch, torch.distributed as dist
dist.init_process_group('nccl', rank=0, world_size=1, device_id=torch.device('cuda:0'))
x = torch.ones(1 << 20, device='cuda')
dist.all_reduce(x); torch.cuda.synchronize()
print('pid', os.getpid(), 'torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), flush=True)
open('/tmp/${name}.ready', 'w').close()
n, end = 1, time.time() + ${seconds}
while time.time() < end:
    dist.all_reduce(x); n += 1
    if n % 1000 == 0: torch.cuda.synchronize()
torch.cuda.synchronize()
print('all_reduce calls', n, flush=True)
dist.destroy_process_group()
" >"${out}/${name}.txt" 2>&1 &
  trainers+=($!)
  for _ in $(seq 1 120); do [[ -e "/tmp/${name}.ready" ]] && return 0; sleep 0.5; done
  echo "${name}: no communicator within 60 s"; cat "${out}/${name}.txt"; return 1
}

step "machine"
date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
getent ahosts localhost | sort -u
"${reader}" --help | head -1

step "before any NCCL process: expect unavailable (exit 3)"
"${reader}"; rc=$?; echo "exit ${rc}"; [[ ${rc} -eq 3 ]] || failed+=" before"

step "one trainer"
start_trainer trainer1 29531 40 || failed+=" trainer1"
grep -m3 "RAS" "${out}/trainer1.txt"

step "JSON, three reads 3 s apart (no stall reason; a one-rank communicator counts nothing: NCCL's one-rank shortcut)"
"${reader}" --count 3 --interval-seconds 3; rc=$?; echo "exit ${rc}"; [[ ${rc} -eq 0 ]] || failed+=" json"

step "text (the form before NCCL 2.28.7)"
"${reader}" --format text; rc=$?; echo "exit ${rc}"; [[ ${rc} -eq 0 ]] || failed+=" text"

step "a second process of another job in the same network namespace: which one answers?"
start_trainer trainer2 29532 20 || failed+=" trainer2"
grep -m3 "RAS" "${out}/trainer2.txt"
for i in 1 2 3 4 5 6 7 8; do
  "${reader}" 2>&1 | grep -m1 '"pid"' | sed "s/^ */read ${i}: /"
done

step "after the trainers exit: expect unavailable again"
finish_trainers
"${reader}"; rc=$?; echo "exit ${rc}"; [[ ${rc} -eq 3 ]] || failed+=" after"
for name in trainer1 trainer2; do echo "--- ${name}"; grep -v "^$" "${out}/${name}.txt" | tail -5; done

echo
if [[ -n "${failed}" ]]; then echo "FAILED:${failed}"; exit 1; fi
echo "ras-on-device: all passed"
