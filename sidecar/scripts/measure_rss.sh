#!/usr/bin/env bash
# Measures the resident memory of nccl-sidecar: an idle standalone root, and a worker that
# watches its ConfigMap on a real kube-apiserver (tests/harness/controlplane) with a ServiceAccount
# token, before and after the id is published and served.
#
#   sidecar/scripts/measure_rss.sh BUILD_DIR [--by-mapping]
#
# --by-mapping adds, for the watching worker, the largest mappings of /proc/PID/smaps grouped
# by file (Rss / Pss / Private kB): which shared library costs what.
#
# Prints VmRSS (all resident pages, shared libraries included), Pss (shared pages divided
# among the processes using them) and Private (pages only this process holds).
set -euo pipefail
build=$(cd "${1:?usage: measure_rss.sh BUILD_DIR [--by-mapping]}" && pwd)
by_mapping=${2:-}
bin=$build/sidecar/nccl-sidecar
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
cp_dir=$work/controlplane
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$here/tests/harness/controlplane/controlplane.sh" down --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

report() {  # report <label> <pid>
  local rss pss priv
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$2/status")
  pss=$(awk '/^Pss:/{print $2}' "/proc/$2/smaps_rollup")
  priv=$(awk '/^Private_(Clean|Dirty)/{s+=$2} END{print s}' "/proc/$2/smaps_rollup")
  printf '%-44s VmRSS %6s kB   Pss %6s kB   Private %6s kB\n' "$1" "$rss" "$pss" "$priv"
}

wait_http() {  # wait_http <url> : until it answers 200 (10 s)
  for _ in $(seq 200); do curl -sf "$1" >/dev/null && return 0; sleep 0.05; done
  echo "no 200 from $1" >&2; return 1
}

port_of() {  # port_of <log> <field>: the port from the "started" line
  for _ in $(seq 200); do
    if grep -q '"msg":"started"' "$1"; then
      grep '"msg":"started"' "$1" | sed -E "s/.*\"$2\":\"[^\"]*:([0-9]+)\".*/\1/"; return 0
    fi
    sleep 0.05
  done
  echo "sidecar did not start; see $1" >&2; cat "$1" >&2; return 1
}

# 1. Idle standalone root.
NCCLJOB_NAME=rss NCCLJOB_INDEX=0 NCCLJOB_REPLICAS=2 NCCLJOB_ATTEMPT=1 \
  "$bin" --standalone --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --log-format json 2>"$work/root.log" &
pids+=($!); root=$!
probe=$(port_of "$work/root.log" probe_listen); wait_http "http://127.0.0.1:$probe/readyz"
report "standalone root, idle" "$root"

# 2. A worker watching its ConfigMap on a real API server.
"$here/tests/harness/controlplane/controlplane.sh" up --dir "$cp_dir" >/dev/null 2>&1
# shellcheck source=/dev/null
source "$cp_dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" -n rss "$@"; }
"$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" create namespace rss >/dev/null
k create serviceaccount rss-nccl >/dev/null
k create role rss-nccl --verb=get,list,watch --resource=configmaps --resource-name=rss-nccl >/dev/null
k create rolebinding rss-nccl --role=rss-nccl --serviceaccount=rss:rss-nccl >/dev/null
k create configmap rss-nccl --from-literal=attempt=1 >/dev/null
token=$(k create token rss-nccl)
cat >"$work/sa.kubeconfig" <<KC
{"apiVersion":"v1","kind":"Config","current-context":"sa",
 "clusters":[{"name":"c","cluster":{"server":"$APISERVER_URL","certificate-authority":"$cp_dir/pki/ca.crt"}}],
 "users":[{"name":"sa","user":{"token":"$token"}}],
 "contexts":[{"name":"sa","context":{"cluster":"c","user":"sa","namespace":"rss"}}]}
KC
NCCLJOB_NAME=rss NCCLJOB_NAMESPACE=rss NCCLJOB_INDEX=1 NCCLJOB_REPLICAS=2 NCCLJOB_ATTEMPT=1 \
  "$bin" --kubeconfig "$work/sa.kubeconfig" --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --log-format json \
  2>"$work/worker.log" &
pids+=($!); worker=$!
probe=$(port_of "$work/worker.log" probe_listen); api=$(port_of "$work/worker.log" listen)
wait_http "http://127.0.0.1:$probe/readyz"
report "worker, watching the ConfigMap" "$worker"
if [ "$by_mapping" = --by-mapping ]; then
  python3 - "$worker" <<'PY'
import collections, sys
totals = collections.defaultdict(lambda: [0, 0, 0])
name = None
for line in open(f"/proc/{sys.argv[1]}/smaps"):
    fields = line.split()
    if not fields[0].endswith(":"):
        name = fields[5].rsplit("/", 1)[-1] if len(fields) > 5 else "[anonymous]"
    elif fields[0] == "Rss:":
        totals[name][0] += int(fields[1])
    elif fields[0] == "Pss:":
        totals[name][1] += int(fields[1])
    elif fields[0] in ("Private_Clean:", "Private_Dirty:"):
        totals[name][2] += int(fields[1])
for name, (rss, pss, private) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:16]:
    print(f"    {name:36s} Rss {rss:6d}   Pss {pss:6d}   Private {private:6d}")
PY
fi
k patch configmap rss-nccl --type merge -p "{\"data\":{\"uniqueId\":\"$(head -c 128 /dev/urandom | base64 -w0)\"}}" >/dev/null
curl -sf "http://127.0.0.1:$api/v1/id?timeout=30" >/dev/null
report "worker, after serving the id" "$worker"
report "standalone root, still idle" "$root"
