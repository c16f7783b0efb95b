#!/usr/bin/env bash
# Builds kube-score from its Go module at the pinned version (KUBE_SCORE_VERSION in
# tests/harness/versions.env), cached under $NCCLOP_CACHE (default ~/.cache/nccl-operator);
# a second run returns at once. Prints the binary's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
bin="$cache/bin/kube-score-$KUBE_SCORE_VERSION"
if [ ! -x "$bin/kube-score" ]; then
  echo "[kube-score-build] building github.com/zegl/kube-score $KUBE_SCORE_VERSION" >&2
  mkdir -p "$bin"
  GOBIN="$bin" GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0 \
    go install -ldflags "-s -w" "github.com/zegl/kube-score/cmd/kube-score@$KUBE_SCORE_VERSION"
fi
echo "$bin/kube-score"
