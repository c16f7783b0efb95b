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
ctest --output-on-failure -j "$(nproc)" "$@"
