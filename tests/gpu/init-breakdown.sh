#!/usr/bin/env bash
# Where NCCL's init time goes, for the runtime's init (default blocking, or --nonblocking) and for
# raw init: runs the benchmark's --init-only path REPS times with NCCL's INIT debug output
# and prints NCCL's own "Init timings" lines (total, kernels, alloc, bootstrap, allgathers, topo,
# graphs, connections, rest; seconds). Run on the GPU machine from the repository root after
# tests/gpu/prepare-device-bundle.sh:  tests/gpu/init-breakdown.sh [REPS] [bench args, e.g. --nonblocking]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../bench/allreduce/standalone-sidecar.sh"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="${repo}/build-device"
reps="${1:-4}"; shift || true
export NCCL_NVLS_ENABLE=0
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH="${nccl_lib}:${bundle}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
gpus=${BENCH_GPUS:-2}
logs=$(mktemp -d)
for i in $(seq 1 "${reps}"); do
  echo "## rep $i"
  if ! start_standalone_sidecar "${bundle}/bin/nccl-sidecar" "$i" "${gpus}" "${logs}/sidecar-$i.log"; then
    echo "sidecar did not start"; cat "${logs}/sidecar-$i.log"; continue
  fi
  NCCLJOB_INDEX=0 NCCLJOB_WORLD_SIZE="${gpus}" NCCLJOB_GPUS_PER_POD="${gpus}" NCCLJOB_ATTEMPT="$i" \
    NCCLJOB_SIDECAR_URL="http://127.0.0.1:${sidecar_port}" NCCLJOB_INIT_TIMEOUT_SECONDS=60 NCCL_K8S_LOG_LEVEL=warn \
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    timeout 60 "${bundle}/bin/nccl-allreduce-bench" --init-only --raw-inits 1 "$@" 2>&1 \
    | grep -E '^INIT|Init timings|Init START|Init COMPLETE' | sed -E 's/^[^ ]+ [^ ]+ //'
  stop_standalone_sidecar
done
