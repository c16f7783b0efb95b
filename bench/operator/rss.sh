#!/usr/bin/env bash
# Operator memory: RSS idle and with N NcclJobs x R pods (default 100 x 8), against the local
# control plane. Prints a table. Usage:
#   bench/operator/rss.sh [--build DIR] [--jobs N] [--replicas R]
# Uses $NCCLOP_TEST_CONTROLPLANE_DIR when set (an already running control plane), else starts
# one in a temporary directory and stops it afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib.sh
source "$root/bench/operator/lib.sh"
build=$root/build
jobs=100
replicas=8
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--jobs N] [--replicas R]" >&2; exit 2 ;;
  esac
done
op=$build/operator/nccl-operator
[ -x "$op" ] || { echo "no $op: build the nccl-operator target first" >&2; exit 1; }

cp_dir=${NCCLOP_TEST_CONTROLPLANE_DIR:-}
own_cp=0
if [ -z "$cp_dir" ]; then
  cp_dir=$(mktemp -d); own_cp=1
  "$root/tests/harness/controlplane/controlplane.sh" up --dir "$cp_dir" >/dev/null
fi
# shellcheck source=/dev/null
source "$cp_dir/env"
k() { "$CONTROLPLANE_BIN/kubectl" --kubeconfig "$cp_dir/kubeconfig" "$@"; }
ns=bench-rss-$$
log=$(mktemp)
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  [ "$own_cp" = 1 ] && "$root/tests/harness/controlplane/controlplane.sh" down --dir "$cp_dir" >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT

k apply --server-side --force-conflicts -f "$root/deploy/crd/nccl.dev_nccljobs.yaml" >/dev/null
# Asked again while the just-made CRD has no status conditions (kubectl wait errs then), for a minute.
for _ in $(seq 120); do k wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=60s >/dev/null 2>&1 && break; sleep 0.5; done
k wait --for=condition=Established crd/nccljobs.nccl.dev --timeout=1s >/dev/null
k create namespace "$ns" >/dev/null

wait_until() {  # wait_until <seconds> <command...>
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do [ "$(date +%s)" -lt "$deadline" ] || return 1; sleep 0.5; done
}

"$op" --kubeconfig "$cp_dir/kubeconfig" --namespace "$ns" --metrics-bind-address=127.0.0.1:0 \
  --health-probe-bind-address=127.0.0.1:0 --log-level=info >"$log" 2>&1 &
pid=$!
# Idle: caches synced and nothing to do.
wait_until 30 grep -q "caches synced" "$log"
idle=$(proc_kib "$pid" VmRSS)

start=$(date +%s.%N)
load_manifests "$jobs" "$replicas" trainer:1 | k apply -n "$ns" -f - >/dev/null
want=$((jobs * replicas))
wait_pod_count 600 "$want" k get pods -n "$ns" -l nccl.dev/job-name --no-headers \
  || { echo "pods did not all appear; operator log:" >&2; tail -20 "$log" >&2; exit 1; }
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
loaded=$(proc_kib "$pid" VmRSS)
peak=$(proc_kib "$pid" VmHWM)
# RSS = anonymous memory (the process's own) + file pages (shared libraries' code, mostly
# shared with every other process using them).
anon=$(proc_kib "$pid" RssAnon)
file=$(proc_kib "$pid" RssFile)

printf '%-34s %10s\n' "measure" "value"
printf '%-34s %10s\n' "operator RSS idle (MiB)" "$(echo "scale=1; $idle/1024" | bc)"
printf '%-34s %10s\n' "operator RSS $jobs jobs x $replicas pods (MiB)" "$(echo "scale=1; $loaded/1024" | bc)"
printf '%-34s %10s\n' "operator peak RSS (MiB)" "$(echo "scale=1; $peak/1024" | bc)"
printf '%-34s %10s\n' "  of it anonymous (MiB)" "$(echo "scale=1; $anon/1024" | bc)"
printf '%-34s %10s\n' "  of it file-backed (MiB)" "$(echo "scale=1; $file/1024" | bc)"
printf '%-34s %10s\n' "time to create $want pods (s)" "$(printf '%.1f' "$elapsed")"
