#!/usr/bin/env bash
# Where NCCL's init time goes, for the runtime's init (non-blocking parent, blocking split child)
# and for raw init: runs the benchmark's --init-only path REPS times with NCCL's INIT debug output
# and prints NCCL's own "Init timings" lines (total, kernels, alloc, bootstrap, allgathers, topo,
# graphs, connections, rest; seconds). Run on the GPU machine from the repository root after
# tests/gpu/prepare-device-bundle.sh:  tests/gpu/init-breakdown.sh [REPS] [bench args]
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="${repo}/build-device"
reps="${1:-4}"; shift || true
export NCCL_NVLS_ENABLE=0
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH="${nccl_lib}:${bundle}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpus=${BENCH_GPUS:-2}
logs=$(mktemp -d)
for i in $(seq 1 "${reps}"); do
  NCCLJOB_NAME=bench NCCLJOB_NAMESPACE=default NCCLJOB_POD_NAME=bench-0 NCCLJOB_INDEX=0 NCCLJOB_REPLICAS=1 \
    NCCLJOB_GPUS_PER_POD="${gpus}" NCCLJOB_WORLD_SIZE="${gpus}" NCCLJOB_ATTEMPT="$i" \
    timeout 120 "${bundle}/bin/nccl-sidecar" --standalone --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
    </dev/null >/dev/null 2>"${logs}/sidecar-$i.log" &
  sc=$!
  port=""
  for _ in $(seq 1 100); do
    port=$(grep -o 'listen=127.0.0.1:[0-9]*' "${logs}/sidecar-$i.log" | head -1 | cut -d: -f2)
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  echo "## rep $i"
  NCCLJOB_INDEX=0 NCCLJOB_WORLD_SIZE="${gpus}" NCCLJOB_GPUS_PER_POD="${gpus}" NCCLJOB_ATTEMPT="$i" \
    NCCLJOB_SIDECAR_URL="http://127.0.0.1:${port}" NCCLJOB_INIT_TIMEOUT_SECONDS=60 NCCL_K8S_LOG_LEVEL=warn \
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    timeout 60 "${bundle}/bin/nccl-allreduce-bench" --init-only --raw-inits 1 "$@" 2>&1 \
    | grep -E '^INIT|Init timings|Init START|Init COMPLETE' | sed -E 's/^[^ ]+ [^ ]+ //'
  kill "$sc" 2>/dev/null; wait "$sc" 2>/dev/null
done
