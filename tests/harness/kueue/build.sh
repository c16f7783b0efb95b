#!/usr/bin/env bash
# Builds Kueue's manager (cmd/kueue) from the sigs.k8s.io/kueue Go module at the version pinned
# in tests/harness/versions.env and keeps its CRDs and webhook manifests from the same module beside it.
# Cached per version under $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run
# returns at once. Prints the directory (kueue, crd/, webhook.yaml) on its last line.
# Built with its own modules, not beside the control plane's (as KWOK, etcd and helm are): v0.17.0
# does not compile against the k8s.io modules of Kubernetes 1.37 (its Kubeflow Trainer API
# dependency names core/v1 types 1.37 removed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
go_module_who=kueue-build
out="$go_module_cache/bin/kueue-$KUEUE_VERSION"
if [ -x "$out/kueue" ] && [ -f "$out/webhook.yaml" ] && [ -d "$out/crd" ]; then echo "$out"; exit 0; fi

mkdir -p "$out"
go_module_fetch kueue sigs.k8s.io/kueue "$KUEUE_VERSION" sigs.k8s.io/kueue/cmd/kueue
rm -rf "$out/crd" && mkdir -p "$out/crd"
cp "$go_module_src"/config/components/crd/bases/*.yaml "$out/crd/"
cp "$go_module_src/config/components/webhook/manifests.yaml" "$out/webhook.yaml"
go_module_build sigs.k8s.io/kueue/cmd/kueue "$out/kueue" "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION"
echo "$out"
