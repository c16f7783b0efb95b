#!/usr/bin/env bash
# Every CPU benchmark in one command; each prints its table (the GPU one runs on a GPU machine:
# tests/gpu/run-on-device.sh). Programs, not tests: numbers go into each folder's RESULTS.md
# by hand, with the date, the machine and the command.
#
#   bench/run-all.sh [--build DIR] [--quick]
#
#   watch     kube client: watch events/s decoded into the cache, memory      (bench/watch)
#   operator  operator RSS idle and with 100 jobs x 8 pods, pod creation time (bench/operator/rss.sh)
#   jobset    nccl-operator beside JobSet: time, RSS, CPU, API writes          (bench/jobset/compare.sh)
#   idspread  id delivery to N sidecars vs TCPStore vs root push               (bench/idspread/run.sh)
#   scale     4096-pod job, 500 x 8 jobs, churn on KWOK fake nodes, vs JobSet  (bench/scale/run.sh)
#   progress  sidecar CPU/RSS under progress reports, ns per report call       (bench/progress/run.sh)
# --quick: smaller sizes (20 x 8 jobs; N = 4 32 128 without torch's 1000; scale at 1x only, churn
# 60 s; progress phases of 10 s), for a first look.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "run-all.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
"$root/scripts/setup.sh" --build-dir "$build"
section() { printf '\n==== %s ====\n' "$*"; }

section "watch throughput (bench/watch)"
"$build/bench/watch/kube_watch_bench" --pods 5000 --events $([ $quick -eq 1 ] && echo 20000 || echo 100000)

section "operator memory (bench/operator/rss.sh)"
if [ $quick -eq 1 ]; then "$root/bench/operator/rss.sh" --build "$build" --jobs 20 --replicas 8
else "$root/bench/operator/rss.sh" --build "$build"; fi

section "nccl-operator vs JobSet (bench/jobset/compare.sh)"
if [ $quick -eq 1 ]; then "$root/bench/jobset/compare.sh" --build "$build" --workloads 20 --replicas 8
else "$root/bench/jobset/compare.sh" --build "$build"; fi

section "scale on KWOK fake nodes (bench/scale/run.sh)"
if [ $quick -eq 1 ]; then "$root/bench/scale/run.sh" --build "$build" --nodes 100 --sizes 0.1 --churn-seconds 60
else "$root/bench/scale/run.sh" --build "$build" --nodes 600 --churn-seconds 600 --plot; fi

section "id delivery at scale (bench/idspread/run.sh)"
if [ $quick -eq 1 ]; then IDSPREAD_REPEATS=1 "$root/bench/idspread/run.sh" "$build" 4 32 128
else "$root/bench/idspread/run.sh" "$build"; fi

section "progress reports (bench/progress/run.sh)"
if [ $quick -eq 1 ]; then "$root/bench/progress/run.sh" --build "$build" --seconds 10 --burst-seconds 3
else "$root/bench/progress/run.sh" --build "$build"; fi
