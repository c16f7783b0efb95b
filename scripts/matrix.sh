#!/usr/bin/env bash
# The version matrix: runs the cluster tiers against each pinned Kubernetes minor
# (tests/harness/kube/<minor>.env), each version's binaries built and cached like the default's,
# and records what ran and passed in tests/matrix/results.json and tests/matrix/RESULTS.md
# (date, commit, machine; per version and tier the tests run, passed, failed and skipped, and the
# failures by name). The C++ build is the same for every version: only the cluster differs.
#
#   scripts/matrix.sh [--versions 1.35,1.36,1.37] [--tiers integration,node,realnode]
#                     [--build-dir DIR] [-- ctest arguments...]
#
# Tiers are CTest labels (matched whole: node is not realnode): integration (the shared control plane: operator, Helm, flows with the
# local node), node (testnode), realnode (kubelet, containerd, runc, CoreDNS: needs root and the
# images). Run it before a change to the API the operator speaks, and whenever a pin moves. Exits 1
# when a test failed; a failed tier's log stays in build-matrix-logs/<time>/. The build dir is configured for each version in turn and for the default at
# the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build"
versions="" tiers=integration,node,realnode ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --versions) versions=$2; shift 2 ;;
    --tiers) tiers=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "matrix.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$versions" ]; then
  versions=$(cd "$root/tests/harness/kube" && ls ./*.env | sed 's|./||; s|\.env$||' | sort -V | paste -sd,)
fi
for t in ${tiers//,/ }; do
  case "$t" in integration|node|realnode) ;; *) echo "matrix.sh: unknown tier $t (integration, node, realnode)" >&2; exit 2 ;; esac
done
for v in ${versions//,/ }; do
  [ -f "$root/tests/harness/kube/$v.env" ] || { echo "matrix.sh: no pins for Kubernetes $v (tests/harness/kube/$v.env)" >&2; exit 2; }
done
log() { echo "[matrix] $*" >&2; }
out="$root/tests/matrix"
runs=$(mktemp -d)
restore() { (unset NCCLOP_KUBE_MINOR; cmake -S "$root" -B "$build_dir" >/dev/null) || true; }
# A tier that failed keeps its log (every test's output) for reading after the run.
keep_failed_logs() {
  [ -f "$runs/index" ] || return 0
  local v t rc rest
  while read -r v t rc rest; do
    [ "$rc" -eq 0 ] && continue
    mkdir -p "$failed_logs"
    cp "$runs/$v-$t.log" "$failed_logs/"
    log "Kubernetes $v, tier $t failed: its log is $failed_logs/$v-$t.log"
  done < "$runs/index"
}
failed_logs=${NCCLOP_MATRIX_LOGS:-$root/build-matrix-logs/$(date -u +%Y%m%d-%H%M%S)}
trap 'keep_failed_logs; restore; rm -rf "$runs"' EXIT

"$root/scripts/setup.sh" --build-dir "$build_dir"
# What was tested: the commit, and whether the tree differed from it, when the run began.
commit=$(git -C "$root" rev-parse --short HEAD)
[ -z "$(git -C "$root" status --porcelain --untracked-files=no)" ] || commit="$commit+changes"
status=0
for v in ${versions//,/ }; do
  export NCCLOP_KUBE_MINOR=$v
  log "Kubernetes $v: building (or finding cached) binaries"
  "$root/tests/harness/controlplane/build.sh" --node >/dev/null
  case ",$tiers," in *,realnode,*) "$root/tests/harness/realnode/build.sh" >/dev/null ;; esac
  cmake -S "$root" -B "$build_dir" >/dev/null   # the tests' binary paths for this version
  for t in ${tiers//,/ }; do
    log "Kubernetes $v, tier $t"
    started=$(date +%s)
    rc=0
    (cd "$build_dir" && ctest -L "^$t\$" -j "$(nproc)" --output-on-failure --output-junit "$runs/$v-$t.xml" \
      "${ctest_args[@]}" > "$runs/$v-$t.log" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] || status=1
    echo "$v $t $rc $(( $(date +%s) - started )) $(date -u -d "@$started" '+%Y-%m-%d %H:%M UTC' | tr ' ' _) $commit" >> "$runs/index"
    tail -3 "$runs/$v-$t.log" >&2
  done
done
python3 "$root/scripts/lib/matrix_results.py" --runs "$runs" --out "$out" --root "$root"
log "results: tests/matrix/RESULTS.md"
exit $status
