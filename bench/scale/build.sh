#!/usr/bin/env bash
# Builds KWOK (sigs.k8s.io/kwok: fake nodes and the lifecycle of their pods, driven by Stage
# objects) from its Go module at $KWOK_VERSION (default: the pin in tests/harness/versions.env)
# through a throw-away wrapper module. Cached per version under $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run
# returns at once. Prints the directory that holds `kwok` and `crds/` (its Stage CRD and the
# other CRDs it watches) on its last line. Nothing of KWOK is copied into this repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib/go-module.sh
source "$here/../../scripts/lib/go-module.sh"
go_module_who=kwok-build
requested=${KWOK_VERSION:-}
# shellcheck source=../../tests/harness/versions.env
source "$here/../../tests/harness/versions.env"
version=${requested:-$KWOK_VERSION}
out="$go_module_cache/bin/kwok-$version"
if [ -x "$out/kwok" ] && [ -d "$out/crds" ]; then echo "$out"; exit 0; fi

mkdir -p "$out"
go_module_fetch kwok sigs.k8s.io/kwok "$version" sigs.k8s.io/kwok/cmd/kwok
rm -rf "$out/crds" && mkdir -p "$out/crds"
cp "$go_module_src"/kustomize/crd/bases/*.yaml "$out/crds/"
go_module_build sigs.k8s.io/kwok/cmd/kwok "$out/kwok" "-X sigs.k8s.io/kwok/pkg/consts.Version=$version"
echo "$out"
