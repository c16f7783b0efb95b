#!/usr/bin/env bash
# Builds the JobSet controller manager from its Go module at $JOBSET_VERSION (default: the pin in
# tests/harness/versions.env, the newest release, on k8s.io/* v0.36: JobSet supports the last
# three Kubernetes minors) through a throw-away wrapper module. Output is cached per version under $NCCLOP_CACHE (default
# ~/.cache/nccl-operator); a second run returns at once. Prints the directory that holds
# `jobset-manager`, `in-place-restart-agent` (cmd/in-place-restart-agent: the agent sidecar of its
# InPlaceRestart strategy, static) and `crds/` (its CRDs from config/components/crd/bases) on its
# last line.
# Nothing of JobSet is ever copied into this repository.
set -euo pipefail
requested=${JOBSET_VERSION:-}
# shellcheck source=../../tests/harness/versions.env
source "$(dirname "$0")/../../tests/harness/versions.env"
version=${requested:-$JOBSET_VERSION}
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
out="$cache/bin/jobset-$version"
if [ -x "$out/jobset-manager" ] && [ -x "$out/in-place-restart-agent" ] && [ -d "$out/crds" ]; then
  echo "$out"; exit 0
fi

mkdir -p "$out/crds" "$cache/src/jobset-$version"
# shellcheck source=../../scripts/lib/go-module.sh
source "$(dirname "$0")/../../scripts/lib/go-module.sh"
go_module_env
log() { echo "[jobset-build] $*" >&2; }
cd "$cache/src/jobset-$version"
printf 'module local/jobsetbuild\n\ngo 1.25.0\n' > go.mod
log "resolving sigs.k8s.io/jobset@$version"
go get "sigs.k8s.io/jobset@$version" >/dev/null 2>&1
dir=$(go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
cp "$dir"/config/components/crd/bases/*.yaml "$out/crds/"
chmod u+w "$out"/crds/*.yaml
build() {  # build <name> <package>
  [ -x "$out/$1" ] && return 0
  log "building $1"
  go build -ldflags "-s -w" -o "$out/$1.tmp" "$2"
  mv "$out/$1.tmp" "$out/$1"
}
build jobset-manager sigs.k8s.io/jobset
build in-place-restart-agent sigs.k8s.io/jobset/cmd/in-place-restart-agent
echo "$out"
