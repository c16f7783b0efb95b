#!/usr/bin/env bash
# Builds Kueue's manager (cmd/kueue) from the sigs.k8s.io/kueue Go module at the version pinned
# in versions.env and keeps its CRDs and webhook manifests from the same module beside it.
# Cached per version under $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run
# returns at once. Prints the directory (kueue, crd/, webhook.yaml) on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/versions.env"
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
out="$cache/bin/kueue-$KUEUE_VERSION"
if [ -x "$out/kueue" ] && [ -f "$out/webhook.yaml" ] && [ -d "$out/crd" ]; then echo "$out"; exit 0; fi

log() { echo "[kueue-build] $*" >&2; }
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
mod="$cache/src/kueue-$KUEUE_VERSION"
mkdir -p "$mod" "$out"
cd "$mod"
printf 'module local/kueuebuild\n\ngo 1.25.0\n\nrequire sigs.k8s.io/kueue %s\n' "$KUEUE_VERSION" > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
GO
log "resolving sigs.k8s.io/kueue $KUEUE_VERSION"
go get "sigs.k8s.io/kueue@$KUEUE_VERSION" >/dev/null 2>&1
go mod tidy >/dev/null
src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
start=$(date +%s)
log "building kueue"
go build -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" \
  -o "$out/kueue.tmp" sigs.k8s.io/kueue/cmd/kueue
rm -rf "$out/crd" && mkdir -p "$out/crd"
cp "$src"/config/components/crd/bases/*.yaml "$out/crd/"
cp "$src/config/components/webhook/manifests.yaml" "$out/webhook.yaml"
chmod -R u+w "$out"
mv "$out/kueue.tmp" "$out/kueue"
log "built in $(( $(date +%s) - start ))s"
echo "$out"
