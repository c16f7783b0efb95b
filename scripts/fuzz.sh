#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan, separate build dir build-fuzz/)
# and runs each one: first every checked-in input of fuzz/corpus/<target> once (the regression
# replay), then fuzzing for SECONDS from that corpus (0: replay only). New inputs go to
# build-fuzz/corpus/<target>, crashes to build-fuzz/crashes/. Prints one line per target with
# the executions and exits 1 when any target crashed.
#
#   scripts/fuzz.sh [SECONDS per target, default 60] [--runs N] [--only REGEX]
#
# --runs N stops a target after N executions when that comes before SECONDS (the issue's
# "1 million executions or 10 minutes": scripts/fuzz.sh 600 --runs 1000000).
# Installs clang and libFuzzer (Debian packages) when they are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60
only=.
runs=-1
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[fuzz] $*" >&2; }

# shellcheck source=lib/debian-packages.sh
source "$root/scripts/lib/debian-packages.sh"
debian_install_missing fuzz clang libclang-rt-dev

build="$root/build-fuzz"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  log "configuring $build (clang, ASan + UBSan + libFuzzer)"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DNCCLOP_FUZZ=ON -DNCCLOP_BUILD_TESTS=OFF -DNCCLOP_BUILD_RUNTIME=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" --target fuzz_targets -j "$(nproc)"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/crashes"
failed=0
printf '%-18s %8s %12s %10s %8s %s\n' target seconds executions exec/s corpus result
for exe in "$build"/fuzz/*_fuzz; do
  name=$(basename "$exe" _fuzz)
  [[ $name =~ $only ]] || continue
  seeds="$root/fuzz/corpus/$name"
  work="$build/corpus/$name"
  mkdir -p "$work"
  dict=()
  [ -f "$root/fuzz/dict/$name.dict" ] && dict=(-dict="$root/fuzz/dict/$name.dict")
  out="$build/$name.log"
  result=ok
  # The replay: each checked-in input (seeds and regressions) once.
  if ! "$exe" "${dict[@]}" -runs=0 "$seeds" >"$out" 2>&1; then
    result="CRASH in replay ($out)"; failed=1
  fi
  execs=0; rate=0; elapsed=0
  if [ "$result" = ok ] && [ "$seconds" -gt 0 ]; then
    started=$(date +%s)
    if ! "$exe" "${dict[@]}" -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 \
         -artifact_prefix="$build/crashes/$name-" "$work" "$seeds" >"$out" 2>&1; then
      result="CRASH ($out; inputs in $build/crashes)"; failed=1
    fi
    execs=$(awk -F: '/stat::number_of_executed_units/ {s += $NF} END {print s + 0}' "$out")
    elapsed=$(( $(date +%s) - started ))
    rate=$(( execs / (elapsed > 0 ? elapsed : 1) ))
  fi
  printf '%-18s %8s %12s %10s %8s %s\n' "$name" "$elapsed" "$execs" "$rate" \
    "$(find "$work" "$seeds" -type f | wc -l)" "$result"
done
exit "$failed"
