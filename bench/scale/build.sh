#!/usr/bin/env bash
# Builds KWOK (sigs.k8s.io/kwok: fake nodes and the lifecycle of their pods, driven by Stage
# objects) from its Go module at $KWOK_VERSION (default v0.8.0) through a throw-away wrapper
# module. Cached per version under $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run
# returns at once. Prints the directory that holds `kwok` and `crds/` (its Stage CRD and the
# other CRDs it watches) on its last line. Nothing of KWOK is copied into this repository.
set -euo pipefail
version=${KWOK_VERSION:-v0.8.0}
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
out="$cache/bin/kwok-$version"
if [ -x "$out/kwok" ] && [ -d "$out/crds" ]; then echo "$out"; exit 0; fi

log() { echo "[kwok-build] $*" >&2; }
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
mod="$cache/src/kwok-$version"
mkdir -p "$mod" "$out"
cd "$mod"
printf 'module local/kwokbuild\n\ngo 1.25.0\n\nrequire sigs.k8s.io/kwok %s\n' "$version" > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
GO
log "resolving sigs.k8s.io/kwok $version"
go get "sigs.k8s.io/kwok@$version" >/dev/null 2>&1
go mod tidy >/dev/null 2>&1 || go mod tidy
src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
start=$(date +%s)
log "building kwok"
go build -tags tools -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$version" \
  -o "$out/kwok.tmp" sigs.k8s.io/kwok/cmd/kwok
rm -rf "$out/crds" && mkdir -p "$out/crds"
cp "$src"/kustomize/crd/bases/*.yaml "$out/crds/"
chmod -R u+w "$out"
mv "$out/kwok.tmp" "$out/kwok"
log "built in $(( $(date +%s) - start ))s"
echo "$out"
