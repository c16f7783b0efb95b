#!/usr/bin/env bash
# Everything the GPU machine does in one call: the GPU tests, time to communicator and the
# all-reduce benchmark, from the bundle tests/gpu/prepare-device-bundle.sh made (carried as
# build-device/). Writes to $OUT: env.txt, gpu-tests.txt, init.txt, bench.txt, logs.tar.gz.
# Run from the repository root:
#   tests/gpu/run-on-device.sh                      # 1 GPU: shape 1x1, deadline tests, 1-GPU bench
#                                                   # 2 GPUs: also shapes 2x1 1x2, netns pods, 2-GPU bench
#   SHAPES="2x2 1x4 4x1" tests/gpu/run-on-device.sh # 4 GPUs;  8 GPUs: SHAPES="2x4 4x2 8x1 1x8"
# The benchmark uses every GPU of the machine in one process (at most 8; BENCH_GPUS overrides):
# 8 B to 1 GiB, runtime against raw NCCL per size (time ratio, busbw), in both communicator modes.
# Every process runs under `timeout` (parts: tests 240 s, init 150 + 90 s, bench 100 s a run);
# on one H200 the whole script takes about 4 minutes. Exit status 1 when a part failed (named
# on the last line).
# Knobs: PARTS="tests init bench" (a subset runs only those), INIT_REPS (processes sampled for
# time to communicator in the default mode, blocking; default 20) and INIT_REPS_NONBLOCKING
# (default 10), BENCH_MODES (one benchmark run per word: "default" = NCCL_K8S_COMM_MODE unset,
# i.e. blocking; "--nonblocking"), BENCH_ARGS (sizes, iterations and repetitions).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-/tmp/ncclk8s-out}"
mkdir -p "${out}"
bundle="${repo}/build-device"
logs=$(mktemp -d)
export NCCL_NVLS_ENABLE=0   # never NVLink multicast on these shared machines
# The bundle's iproute2 when the machine has none (tests/gpu/netns-pods.sh needs ip).
command -v ip >/dev/null || { [[ -x "${bundle}/tools/ip" ]] && export PATH="${bundle}/tools:${PATH}"; }

# NCCL from the image's Python wheel (the bundle carries the CUDA runtime it was built with).
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH="${nccl_lib}:${bundle}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -r; nvidia-smi -L; nvidia-smi topo -m
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  echo "nccl lib dir: ${nccl_lib}"; ls -la "${nccl_lib}"
  python3 -m pip show nvidia-nccl-cu13 2>/dev/null | head -2
  ldd "${bundle}/bin/nccl-allreduce"; ldd "${bundle}/bin/nccl-sidecar" | grep -i "not found" || echo "sidecar libs ok"
} >"${out}/env.txt" 2>&1
cat "${out}/env.txt" | head -30

parts=" ${PARTS:-tests init bench} "   # which parts to run (all by default)
unset NCCL_K8S_COMM_MODE                # "default" below means the runtime's own default
: >"${out}/gpu-tests.txt"; : >"${out}/init.txt"; : >"${out}/bench.txt"
failed=""                               # parts that failed; the exit status is 1 when any did
reap() {  # a part's outer `timeout` kills only its shell: stop what it left behind
  pkill -f "${bundle}/bin/" 2>/dev/null || true
}
source "${repo}/bench/allreduce/standalone-sidecar.sh"

if [[ "$parts" == *" tests "* ]]; then
  echo "===== GPU tests"
  timeout 240 "${repo}/tests/gpu/gpu-tests.sh" "${bundle}/bin" "${bundle}/bin/nccl-sidecar" "${logs}/gpu" 2>&1 | tee "${out}/gpu-tests.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=" tests"
  reap
fi

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
bench_gpus=${BENCH_GPUS:-$(( gpus < 8 ? gpus : 8 ))}
export BENCH_GPUS=${bench_gpus}
if [[ "$parts" == *" init "* ]]; then
  echo "===== time to communicator: raw vs runtime, one process per sample, alternating order (${bench_gpus} GPUs)"
  {
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) default (blocking): bench/allreduce/init-reps.sh ${INIT_REPS:-20}"
    timeout 150 "${repo}/bench/allreduce/init-reps.sh" "${bundle}/bin" "${INIT_REPS:-20}"
    echo "# non-blocking: init-reps.sh ${INIT_REPS_NONBLOCKING:-10} --nonblocking"
    timeout 90 "${repo}/bench/allreduce/init-reps.sh" "${bundle}/bin" "${INIT_REPS_NONBLOCKING:-10}" --nonblocking
  } 2>&1 | tee "${out}/init.txt"
  grep -q "no sample\|no samples" "${out}/init.txt" && failed+=" init"
  reap
fi

bench_args="${BENCH_ARGS:---min-bytes 8 --max-bytes 1G --iters 40 --reps 15 --raw-inits 3}"
if [[ "$parts" == *" bench "* ]]; then
  echo "===== benchmark: runtime vs raw NCCL, one process x ${bench_gpus} GPUs"
  {
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nvidia-smi -L | tr '\n' ' ')"
    attempt=0
    for mode in ${BENCH_MODES:-default --nonblocking default --nonblocking}; do
      [[ "$mode" == default ]] && mode=""
      attempt=$((attempt + 1))
      start_standalone_sidecar "${bundle}/bin/nccl-sidecar" "$attempt" "${bench_gpus}" "${logs}/bench-sidecar-$attempt.log" \
        || { echo "## run $attempt: sidecar did not start"; echo "## exit 1"; continue; }
      echo "## run $attempt: NCCLJOB_ATTEMPT=$attempt nccl-allreduce-bench ${bench_args} $mode"
      NCCLJOB_INDEX=0 NCCLJOB_WORLD_SIZE=${bench_gpus} NCCLJOB_GPUS_PER_POD=${bench_gpus} NCCLJOB_ATTEMPT=$attempt \
        NCCLJOB_SIDECAR_URL="http://127.0.0.1:${sidecar_port}" NCCLJOB_INIT_TIMEOUT_SECONDS=120 NCCL_K8S_LOG_LEVEL=warn \
        timeout 100 "${bundle}/bin/nccl-allreduce-bench" ${bench_args} $mode
      echo "## exit $?"
      stop_standalone_sidecar
    done
  } 2>&1 | tee "${out}/bench.txt"
  grep -q "^## exit [1-9]" "${out}/bench.txt" && failed+=" bench"
  reap
fi

tar -czf "${out}/logs.tar.gz" -C "${logs}" . 2>/dev/null
echo "===== summary"
grep -E "passed, .* failed|^(PASS|FAIL|SKIP)" "${out}/gpu-tests.txt"
grep -E "^(#|raw|runtime|  runtime|ratio|order-balanced|rep .*no sample)" "${out}/init.txt"
grep -E "^## run|runtime communicators|^ *(8|1024|1048576|16777216|1073741824) |rt/raw time over|exit" "${out}/bench.txt"
if [[ -n "$failed" ]]; then echo "FAILED:${failed}"; exit 1; fi
echo "all parts run passed"
