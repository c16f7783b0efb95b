#!/usr/bin/env bash
# scripts/demo.sh without a cluster: --help is the header comment and names --down; --down
# stops what a kept demo left in --dir, the node first (SIGTERM, and waits for it) and then the
# control plane, removes node.pid, and is a no-op when nothing runs. The node and the control
# plane are stand-ins: a script named testnode and a process behind etcd.pid.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
demo="$root/scripts/demo.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

help=$("$demo" --help)
header=$(awk 'NR == 1 { next } /^#/ { print; next } { exit }' "$demo")
[ "$help" = "$header" ] || fail "--help is not the header comment:"$'\n'"$help"
grep -q 'scripts/demo.sh --down' <<<"$help" || fail "--help does not name scripts/demo.sh --down"

work=$(mktemp -d); started=()
cleanup() { local p; for p in "${started[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

mkdir -p "$work/bin" "$work/demo"
# The stand-in node records whether the control plane still ran when it was told to stop.
cat > "$work/bin/testnode" <<'NODE'
#!/usr/bin/env bash
on_term() {
  if kill -0 "$(cat "$1/etcd.pid")" 2>/dev/null; then echo cp-up > "$1/node-stopped"; else echo cp-down > "$1/node-stopped"; fi
  kill "$child"; exit 0
}
trap 'on_term "$1"' TERM
sleep 1000 & child=$!
wait "$child"
NODE
chmod +x "$work/bin/testnode"
"$work/bin/testnode" "$work/demo" & node=$!; started+=("$node")
echo "$node" > "$work/demo/node.pid"
sleep 1000 & etcd=$!; started+=("$etcd")
echo "$etcd" > "$work/demo/etcd.pid"

out=$("$demo" --down --dir "$work/demo") || fail "--down exited $?: $out"
grep -q "stopping the node (pid $node" <<<"$out" || fail "--down did not say it stops the node: $out"
grep -q "stopping the control plane" <<<"$out" || fail "--down did not say it stops the control plane: $out"
[ ! -d "/proc/$node" ] || [ "$(cat "/proc/$node/stat" | awk '{print $3}')" = Z ] || fail "--down returned before the node exited"
[ "$(cat "$work/demo/node-stopped" 2>/dev/null)" = cp-up ] || fail "the node must get SIGTERM while the control plane still runs (it marks the Node NotReady)"
! kill -0 "$etcd" 2>/dev/null || fail "--down left the control plane (etcd.pid) running"
[ ! -e "$work/demo/node.pid" ] || fail "--down left node.pid"

out=$("$demo" --down --dir "$work/demo") || fail "a second --down exited $?"
grep -q "nothing was running" <<<"$out" || fail "a second --down: $out"
rc=0; "$demo" --down --keep --dir "$work/demo" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "--down --keep must be a usage error (2), got $rc"
echo "ok demo.sh --help and --down"
