# Sourced by the GPU-machine scripts: starts a real `nccl-sidecar --standalone` for one pod that
# holds every local GPU, on a loopback port the OS picks.
#   start_standalone_sidecar SIDECAR_BIN ATTEMPT GPUS LOG   -> sets sidecar_pid and sidecar_port
# Returns 1 (sidecar stopped, port empty) unless its start line with a real port shows up in LOG
# within 10 s (a sidecar that cannot bind logs "cannot listen" with port 0 and exits).
start_standalone_sidecar() {
  local bin=$1 attempt=$2 gpus=$3 log=$4
  NCCLJOB_NAME=bench NCCLJOB_NAMESPACE=default NCCLJOB_POD_NAME=bench-0 NCCLJOB_INDEX=0 NCCLJOB_REPLICAS=1 \
    NCCLJOB_GPUS_PER_POD="${gpus}" NCCLJOB_WORLD_SIZE="${gpus}" NCCLJOB_ATTEMPT="${attempt}" \
    timeout 300 "${bin}" --standalone --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
    </dev/null >/dev/null 2>"${log}" &
  sidecar_pid=$!
  sidecar_port=""
  for _ in $(seq 1 100); do
    sidecar_port=$(grep -v 'cannot listen' "${log}" 2>/dev/null | grep -o 'listen=127.0.0.1:[1-9][0-9]*' | head -1 | cut -d: -f2)
    [[ -n "${sidecar_port}" ]] && return 0
    kill -0 "${sidecar_pid}" 2>/dev/null || break
    sleep 0.1
  done
  sidecar_port=""
  stop_standalone_sidecar
  return 1
}

stop_standalone_sidecar() {
  [[ -n "${sidecar_pid:-}" ]] || return 0
  kill "${sidecar_pid}" 2>/dev/null
  wait "${sidecar_pid}" 2>/dev/null
  sidecar_pid=""
}
