#!/usr/bin/env bash
# In a fresh network namespace holding only lo and eth0 (one end of a veth pair, with a chosen
# IP and a default route), the runtime must set NCCL_SOCKET_IFNAME=eth0 and the id NCCL makes
# must carry that IP. Two runs: with NCCLJOB_POD_IP, and from the default route alone.
# Exit 77 (skipped) when not root or network namespaces are unavailable.
set -uo pipefail
probe="${1:?usage: netns_test.sh PATH/TO/runtime-netns-probe}"
ns="ncclk8s-$$"
host_if="nk8s$$"
ip_addr="10.77.$(( $$ % 200 + 1 )).2"

if [[ $(id -u) -ne 0 ]]; then echo "SKIPPED: needs root to create a network namespace"; exit 77; fi
if ! command -v ip >/dev/null; then echo "SKIPPED: the 'ip' tool (iproute2) is not installed"; exit 77; fi
if ! ip netns add "$ns" 2>/tmp/netns-err-$$; then
  echo "SKIPPED: cannot create a network namespace: $(cat /tmp/netns-err-$$)"; rm -f /tmp/netns-err-$$; exit 77
fi
rm -f /tmp/netns-err-$$
cleanup() { ip link del "$host_if" 2>/dev/null; ip netns del "$ns" 2>/dev/null; }
trap cleanup EXIT

set -e
ip link add "$host_if" type veth peer name eth0 netns "$ns"
ip -n "$ns" addr add "${ip_addr}/24" dev eth0
ip -n "$ns" link set lo up
ip -n "$ns" link set eth0 up
ip link set "$host_if" up
ip -n "$ns" route add default dev eth0
set +e

echo "namespace $ns: $(ip -n "$ns" -brief addr | tr -s ' ' | tr '\n' ';')"
fail=0
echo "-- with NCCLJOB_POD_IP=${ip_addr}"
ip netns exec "$ns" env -u NCCL_SOCKET_IFNAME NCCLJOB_POD_IP="$ip_addr" "$probe" eth0 "$ip_addr" || fail=1
echo "-- from the default route only"
ip netns exec "$ns" env -u NCCL_SOCKET_IFNAME -u NCCLJOB_POD_IP "$probe" eth0 "$ip_addr" || fail=1
echo "-- a user's value is kept (=eth0)"
ip netns exec "$ns" env NCCL_SOCKET_IFNAME==eth0 "$probe" =eth0 "$ip_addr" || fail=1
exit $fail
