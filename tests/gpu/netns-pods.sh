#!/usr/bin/env bash
# Two "pods" as network namespaces on a bridge, like a node's pod network: each has eth0 (a
# veth with its pod IP) and lo, its own sidecar and one trainer on its own GPU. The runtime must
# pick eth0 from NCCLJOB_POD_IP and NCCL must bootstrap over it; every sum must be right.
# Each pod of a cluster has its own hostname, so NCCL sees two hosts and moves the data over
# its network transport (sockets on eth0 here) rather than NVLink; NCCL_HOSTID stands in for
# the hostname. (With one shared hostname NCCL takes them for one host and its cuMem P2P path
# fails: the file descriptors it passes over abstract UNIX sockets do not cross network
# namespaces.)
#   netns-pods.sh BIN_DIR SIDECAR LOG_DIR
# Exit 0 pass, 1 fail, 77 skipped (not root, no `ip netns`, fewer than 2 GPUs).
set -uo pipefail
bin=$1; sidecar=$2; logs=$3
mkdir -p "$logs"
export NCCL_NVLS_ENABLE=0
[[ $(id -u) -eq 0 ]] || { echo "SKIPPED: netns_pods needs root (ip netns)"; exit 77; }
command -v ip >/dev/null || { echo "SKIPPED: netns_pods needs iproute2"; exit 77; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[[ "${gpus:-0}" -ge 2 ]] || { echo "SKIPPED: netns_pods needs 2 GPUs, found ${gpus:-0}"; exit 77; }

tag="gt$$"; br="br-${tag}"; subnet=10.213.$(( $$ % 200 + 20 ))
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  for i in 0 1; do ip link del "v${tag}${i}" 2>/dev/null; ip netns del "${tag}-pod${i}" 2>/dev/null; done
  ip link del "$br" 2>/dev/null
}
trap cleanup EXIT

ip link add "$br" type bridge && ip addr add "${subnet}.1/24" dev "$br" && ip link set "$br" up \
  || { echo "SKIPPED: cannot create a bridge here"; exit 77; }
for i in 0 1; do
  ns="${tag}-pod${i}"
  ip netns add "$ns" || { echo "SKIPPED: cannot create network namespaces here"; exit 77; }
  ip link add "v${tag}${i}" type veth peer name eth0 netns "$ns"
  ip link set "v${tag}${i}" master "$br" up
  ip -n "$ns" addr add "${subnet}.1$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
done

# Sidecars: the root's API listens on its pod IP so the other pod's sidecar can poll it (what
# the ConfigMap does on a cluster); each trainer talks to its own pod's sidecar.
urls=()
for i in 0 1; do
  ns="${tag}-pod${i}"; ip_addr="${subnet}.1$i"
  args=(--standalone --listen "${ip_addr}:0" --probe-listen 127.0.0.1:0)
  [[ $i -eq 1 ]] && args+=(--peer-url "${urls[0]}")
  NCCLJOB_NAME=netns NCCLJOB_NAMESPACE=default NCCLJOB_POD_NAME="netns-$i" NCCLJOB_INDEX=$i NCCLJOB_REPLICAS=2 \
    NCCLJOB_GPUS_PER_POD=1 NCCLJOB_WORLD_SIZE=2 NCCLJOB_ATTEMPT=1 \
    ip netns exec "$ns" timeout 200 "$sidecar" "${args[@]}" </dev/null >/dev/null 2>"$logs/netns-sidecar$i.log" &
  pids+=($!)
  port=""
  for _ in $(seq 1 100); do
    port=$(grep -o "listen=${ip_addr}:[1-9][0-9]*" "$logs/netns-sidecar$i.log" 2>/dev/null | head -1 | cut -d: -f2)
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || { echo "FAIL netns_pods: sidecar $i did not start"; cat "$logs/netns-sidecar$i.log"; exit 1; }
  urls+=("http://${ip_addr}:${port}")
done

trainers=()
for i in 0 1; do
  ns="${tag}-pod${i}"
  ip netns exec "$ns" env NCCLJOB_NAME=netns NCCLJOB_INDEX=$i NCCLJOB_WORLD_SIZE=2 NCCLJOB_GPUS_PER_POD=1 \
    NCCLJOB_ATTEMPT=1 NCCLJOB_SIDECAR_URL="${urls[$i]}" NCCLJOB_INIT_TIMEOUT_SECONDS=60 \
    NCCLJOB_POD_IP="${subnet}.1$i" CUDA_VISIBLE_DEVICES=$i NCCL_HOSTID="netns-$i" \
    timeout 150 "$bin/nccl-allreduce" --min-bytes 1M --max-bytes 64M --iters 5 \
    >"$logs/netns-pod$i.out" 2>"$logs/netns-pod$i.err" &
  trainers+=($!)
done
ok=0
for i in 0 1; do
  wait "${trainers[$i]}"; rc=$?
  out="$logs/netns-pod$i.out"
  if [[ $rc -ne 0 ]] || ! grep -q "interface eth0, root ${subnet}.10:" "$out" || ! grep -q "all sums correct" "$out"; then
    ok=1; echo "  pod $i: exit $rc"; sed 's/^/    /' "$out" "$logs/netns-pod$i.err" | tail -15
  fi
done
echo "  netns_pods: pod 0:"; sed 's/^/    /' "$logs/netns-pod0.out"
[[ $ok -eq 0 ]] && echo "PASS netns_pods" || echo "FAIL netns_pods"
exit $ok
