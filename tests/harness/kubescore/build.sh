#!/usr/bin/env bash
# Builds kube-score from its Go module at the pinned version (KUBE_SCORE_VERSION in
# tests/harness/versions.env), beside the control plane's Kubernetes modules (its k8s.io/api and
# apimachinery then compile once for both; scripts/lib/go-module.sh), cached under $NCCLOP_CACHE
# (default ~/.cache/nccl-operator); a second run returns at once. Prints the binary's path on its
# last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
go_module_who=kube-score-build
bin="$go_module_cache/bin/kube-score-$KUBE_SCORE_VERSION-beside-k8s-$KUBE_VERSION"
if [ ! -x "$bin/kube-score" ]; then
  mkdir -p "$bin"
  graph=$("$here/../controlplane/build.sh" --graph | tail -1)
  go_module_build_beside "$graph" kube-score github.com/zegl/kube-score "$KUBE_SCORE_VERSION" \
    github.com/zegl/kube-score/cmd/kube-score "$bin/kube-score"
fi
echo "$bin/kube-score"
