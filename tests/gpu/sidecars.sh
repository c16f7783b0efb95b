# Sourced by the GPU test scripts: real `nccl-sidecar --standalone` processes on loopback.
# Needs $sidecar (the binary), $logs (a folder) and the array pids (each sidecar's pid is added).
# NCCLJOB_BOOTSTRAP_ROOTS, when set in the caller's environment, reaches the sidecar;
# SIDECAR_PORT (default 0: the OS picks) and SIDECAR_ARGS (more flags) shape one start.

# start_sidecar NAME INDEX WORLD GPUS ATTEMPT [PEER_URL]: sets $port to its API port ("" if it did
# not start). Not called in $(...): the background sidecar would hold the substitution's pipe open.
start_sidecar() {
  local name=$1 index=$2 world=$3 gpus=$4 attempt=$5 peer=${6:-}
  local args=(--standalone --listen "127.0.0.1:${SIDECAR_PORT:-0}" --probe-listen 127.0.0.1:0 ${SIDECAR_ARGS:-})
  [[ -n "$peer" ]] && args+=(--peer-url "$peer")
  NCCLJOB_NAME=gputest NCCLJOB_NAMESPACE=default NCCLJOB_POD_NAME="gputest-${index}" NCCLJOB_INDEX=$index \
  NCCLJOB_REPLICAS=$(( world / (gpus > 0 ? gpus : 1) )) NCCLJOB_GPUS_PER_POD=$gpus NCCLJOB_WORLD_SIZE=$world \
  NCCLJOB_ATTEMPT=$attempt "${sidecar}" "${args[@]}" </dev/null >/dev/null 2>"${logs}/${name}.log" &
  pids+=($!)
  port=""
  for _ in $(seq 1 100); do   # wait for the "started ... listen=127.0.0.1:PORT" line, at most 10 s
    port=$(grep -o 'listen=127.0.0.1:[0-9]*' "${logs}/${name}.log" 2>/dev/null | head -1 | cut -d: -f2)
    [[ -n "$port" ]] && return 0
    sleep 0.1
  done
  echo "sidecar ${name} did not start:" >&2; cat "${logs}/${name}.log" >&2
  return 1
}


# free_ports N: N loopback ports free now (for sidecars that must know each other's before start).
free_ports() {
  python3 -c 'import socket,sys
socks=[socket.socket() for _ in range(int(sys.argv[1]))]
[s.bind(("127.0.0.1",0)) for s in socks]
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}
