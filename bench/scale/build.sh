#!/usr/bin/env bash
# Builds KWOK (sigs.k8s.io/kwok: fake nodes and the lifecycle of their pods, driven by Stage
# objects) from its Go module at $KWOK_VERSION (default: the pin in tests/harness/versions.env)
# through a throw-away wrapper module, beside the control plane's Kubernetes modules. Cached per
# version under $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run returns at once.
# Prints the directory that holds `kwok` and `crds/` (its Stage CRD and the other CRDs it watches)
# on its last line. Nothing of KWOK is copied into this repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../scripts/lib/go-module.sh
source "$here/../../scripts/lib/go-module.sh"
go_module_who=kwok-build
requested=${KWOK_VERSION:-}
# shellcheck source=../../tests/harness/versions.env
source "$here/../../tests/harness/versions.env"
version=${requested:-$KWOK_VERSION}
# Resolved beside the control plane's Kubernetes modules: the k8s.io packages both use compile once.
out="$go_module_cache/bin/kwok-$version-beside-k8s-$KUBE_VERSION"
if [ -x "$out/kwok" ] && [ -d "$out/crds" ]; then echo "$out"; exit 0; fi

mkdir -p "$out"
graph=$("$here/../../tests/harness/controlplane/build.sh" --graph | tail -1)
# The binary is built aside and moved in last: `kwok` in place means the CRDs are there too.
go_module_build_beside "$graph" kwok sigs.k8s.io/kwok "$version" sigs.k8s.io/kwok/cmd/kwok "$out/kwok.new" \
  "-X sigs.k8s.io/kwok/pkg/consts.Version=$version"
rm -rf "$out/crds" "$out/crds.new" && mkdir -p "$out/crds.new"
cp "$go_module_src"/kustomize/crd/bases/*.yaml "$out/crds.new/"
mv "$out/crds.new" "$out/crds"
mv "$out/kwok.new" "$out/kwok"
echo "$out"
