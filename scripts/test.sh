#!/usr/bin/env bash
# Runs every test: unit tests, integration tests against a real local control plane
# (started and stopped by CTest), end-to-end tests, the fuzz corpora replays (fuzz_replay.*) and
# the chaos harness's short run (chaos.short, tests/chaos). GPU tests skip here with a message
# (they run on a GPU machine through tests/gpu/run-on-device.sh).
#
#   scripts/test.sh [ctest arguments...]     e.g. scripts/test.sh -R kube
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root/build"
# One test more than cores: most tests wait on a cluster, a kubelet or a timeout rather than
# compute (on 2 cores, 3 slots ran the suite in 8 min 15 s against 11 min 5 s for 2).
ctest --output-on-failure -j "$(( $(nproc) + 1 ))" "$@"
