#!/usr/bin/env bash
# Id delivery at scale: the root id POSTed to the root sidecar until every sidecar of the job has
# answered its trainer's long-poll, through the real path (root sidecar -> pod annotation patch ->
# nccl-operator -> ConfigMap -> N sidecars' watches -> their GET answers). Beside it, in the same
# run, the same 128 bytes through a PyTorch TCPStore (torch CPU, threads of one process) and
# through a root that connects to each receiver in turn (the seed's way).
#
#   bench/idspread/run.sh BUILD_DIR [N ...]        (default N: 4 32 128 512 1000)
#
# BUILD_DIR holds sidecar/nccl-sidecar, operator/nccl-operator and bench/idspread/idspread_probe.
# torch comes from bench/idspread/.venv (made on first use; pinned in tests/harness/versions.env).
# Every sidecar is its own process with its own TokenRequest token of the job's ServiceAccount.
# Env: IDSPREAD_REPEATS (runs per N and path, default 3), IDSPREAD_KEEP=1 keeps the work dir,
# IDSPREAD_PERF=1 records the whole machine (perf, cpu-clock, call graphs) while the sidecars
# deliver: .work/run-PID/perf-N-R.data (implies IDSPREAD_KEEP=1).
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [N ...]}" && pwd); shift
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(4 32 128 512 1000)
repeats=${IDSPREAD_REPEATS:-3}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../../tests/harness/versions.env
source "$repo/tests/harness/versions.env"
torch_version=$IDSPREAD_TORCH_VERSION
sidecar=$build/sidecar/nccl-sidecar
operator=$build/operator/nccl-operator
probe=$build/bench/idspread/idspread_probe
for f in "$sidecar" "$operator" "$probe"; do
  [ -x "$f" ] || { echo "missing $f: cmake --build $build --target nccl-sidecar nccl-operator idspread_probe" >&2; exit 2; }
done
if [ ! -x "$here/.venv/bin/python" ] || ! "$here/.venv/bin/python" -c 'import torch' 2>/dev/null; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q "torch==$torch_version"
fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

work=$here/.work/run-$$
mkdir -p "$work"
cp_dir=$work/controlplane
sidecar_pids=()
operator_pid=""
stop_sidecars() {
  for p in "${sidecar_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${sidecar_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  sidecar_pids=()
}
cleanup() {
  stop_sidecars
  [ -n "$operator_pid" ] && kill "$operator_pid" 2>/dev/null || true
  "$repo/tests/harness/controlplane/controlplane.sh" down --dir "$cp_dir" >/dev/null 2>&1 || true
  [ "${IDSPREAD_KEEP:-0}" = 1 ] || [ "${IDSPREAD_PERF:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

# 1000 watchers and a burst of 1000 LISTs: more in-flight requests than the default 400.
CONTROLPLANE_APISERVER_FLAGS="--max-requests-inflight=3000 --max-mutating-requests-inflight=1000 ${CONTROLPLANE_APISERVER_FLAGS:-}" \
  "$repo/tests/harness/controlplane/controlplane.sh" up --dir "$cp_dir" >"$work/controlplane.log" 2>&1
# shellcheck source=/dev/null
source "$cp_dir/env"
kc() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
kc apply --server-side --force-conflicts -f "$repo/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
# Asked again while the just-made CRD has no status conditions (kubectl wait errs then), for a minute.
for _ in $(seq 120); do kc wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=60s >/dev/null 2>&1 && break; sleep 0.5; done
kc wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=1s >/dev/null
"$operator" --kubeconfig "$cp_dir/kubeconfig" --metrics-bind-address=0 --health-probe-bind-address=0 \
  --log-format=json >"$work/operator.log" 2>&1 &
operator_pid=$!

# Waits (60 s) until the command succeeds.
wait_for() {
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "timed out waiting for: $*" >&2; return 1
}

# TokenRequest for the job's ServiceAccount, one per sidecar, over one keep-alive connection.
make_tokens() {  # make_tokens <namespace> <serviceaccount> <count> <out-dir>
  python3 - "$@" "$APISERVER_URL" "$cp_dir/pki" <<'PY'
import http.client, json, ssl, sys, urllib.parse
ns, sa, count, out, url, pki = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
ctx.load_cert_chain(f"{pki}/admin.crt", f"{pki}/admin.key")
u = urllib.parse.urlparse(url)
conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx)
body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                   "spec": {"expirationSeconds": 3600}})
for i in range(count):
    conn.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token", body,
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 201:
        sys.exit(f"TokenRequest {i}: {r.status} {data[:300]!r}")
    with open(f"{out}/{i}.token", "w") as f:
        f.write(json.loads(data)["status"]["token"])
PY
}

port_of() {  # port_of <log> <field>
  for _ in $(seq 600); do
    if grep -q '"msg":"started"' "$1" 2>/dev/null; then
      grep '"msg":"started"' "$1" | sed -E "s/.*\"$2\":\"[^\"]*:([0-9]+)\".*/\1/"; return 0
    fi
    sleep 0.1
  done
  echo "sidecar did not start; see $1" >&2; cat "$1" >&2; return 1
}

all_ready() {  # all_ready <probe-ports-file>: every sidecar's /readyz is 200 (its first LIST worked)
  python3 - "$1" <<'PY'
import sys, urllib.request
for port in open(sys.argv[1]).read().split():
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2)
    except Exception:
        sys.exit(1)
PY
}

summary() {  # summary <file-with-latencies-in-us...>: "p50 p99 max count failures" in ms over all files
  python3 - "$@" <<'PY'
import sys
vals, failures = [], 0
for path in sys.argv[1:]:
    for line in open(path):
        if line.startswith("failures"):
            failures += int(line.split()[1])
        elif line.strip():
            vals.append(int(line) / 1000)
vals.sort()
if not vals:
    print("nan nan nan 0", failures); sys.exit()
pick = lambda q: vals[min(len(vals) - 1, int(q * len(vals)))]
print(f"{pick(0.5):.1f} {pick(0.99):.1f} {vals[-1]:.1f} {len(vals)} {failures}")
PY
}

run_size() {  # run_size <N> <repeat>
  local n=$1 r=$2 ns="spread-$1-$2" job=spread dir="$work/n$1-r$2"
  mkdir -p "$dir/tokens" "$dir/logs"
  kc create namespace "$ns" >/dev/null
  kc -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $job}
spec:
  replicas: $n
  gpusPerPod: 0
  initTimeoutSeconds: 3600
  template:
    spec:
      containers: [{name: trainer, image: idspread:0}]
YAML
  wait_for kc -n "$ns" get serviceaccount "$job-nccl"
  wait_for kc -n "$ns" get rolebinding "$job-nccl"
  wait_for kc -n "$ns" get pod "$job-0"
  wait_for kc -n "$ns" get configmap "$job-nccl"
  local uid; uid=$(kc -n "$ns" get nccljob "$job" -o jsonpath='{.metadata.uid}')
  make_tokens "$ns" "$job-nccl" "$n" "$dir/tokens"
  : >"$dir/api.ports"; : >"$dir/probe.ports"
  for ((i = 0; i < n; i++)); do
    cat >"$dir/tokens/$i.kubeconfig" <<KC
{"apiVersion":"v1","kind":"Config","current-context":"sa",
 "clusters":[{"name":"c","cluster":{"server":"$APISERVER_URL","certificate-authority":"$cp_dir/pki/ca.crt"}}],
 "users":[{"name":"sa","user":{"token":"$(cat "$dir/tokens/$i.token")"}}],
 "contexts":[{"name":"sa","context":{"cluster":"c","user":"sa","namespace":"$ns"}}]}
KC
    NCCLJOB_NAME=$job NCCLJOB_NAMESPACE=$ns NCCLJOB_UID=$uid NCCLJOB_INDEX=$i NCCLJOB_REPLICAS=$n NCCLJOB_ATTEMPT=1 \
      "$sidecar" --kubeconfig "$dir/tokens/$i.kubeconfig" --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
      --log-format json 2>"$dir/logs/$i.log" &
    sidecar_pids+=($!)
  done
  for ((i = 0; i < n; i++)); do
    port_of "$dir/logs/$i.log" listen >>"$dir/api.ports"
    port_of "$dir/logs/$i.log" probe_listen >>"$dir/probe.ports"
  done
  wait_for all_ready "$dir/probe.ports"
  local rss; rss=$(for p in "${sidecar_pids[@]}"; do awk '/^Private_(Clean|Dirty)/{s+=$2} END{print s}' "/proc/$p/smaps_rollup"; done |
                   awk '{s+=$1} END{printf "%.0f", s/NR}')
  echo "N=$n repeat=$r: $n sidecars ready, mean private memory ${rss} kB; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  local profiler=()
  [ "${IDSPREAD_PERF:-0}" = 1 ] && profiler=(perf record -q -e cpu-clock -a -g -o "$work/perf-$n-$r.data" --)
  "${profiler[@]}" "$probe" sidecars --ports "$dir/api.ports" --root-port "$(head -1 "$dir/api.ports")" --timeout 60 \
    >"$work/sidecar-$n-$r.us" 2>"$dir/probe.err" || cat "$dir/probe.err" >&2
  stop_sidecars
  "$probe" push --n "$n" >"$work/push-$n-$r.us"
  "$here/.venv/bin/python" "$here/tcpstore_spread.py" "$n" >"$work/tcpstore-$n-$r.us"
  kc delete namespace "$ns" --wait=false >/dev/null
}

echo "idspread: $(date -u +%FT%TZ), $(nproc) cores, $(uname -r), torch $torch_version, repeats $repeats" >&2
for n in "${sizes[@]}"; do
  for ((r = 1; r <= repeats; r++)); do run_size "$n" "$r"; done
done

echo
python3 "$here/table.py" "$work" "${sizes[@]}"
