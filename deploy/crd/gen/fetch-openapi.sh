#!/usr/bin/env bash
# Saves what the NcclJob CRD's spec.template schema is made from: kube-apiserver's own OpenAPI v3
# (/openapi/v3/api/v1) of the Kubernetes every tier defaults to (KUBE_DEFAULT_MINOR in
# tests/harness/versions.env), cut to io.k8s.api.core.v1.PodTemplateSpec and the schemas it
# needs, as openapi-<KUBE_VERSION>.json beside this script. Run it when that pin moves, then
# gen-template-schema.py. Starts a local control plane of that version (tests/harness/controlplane,
# built and cached by its build.sh) in a temporary directory and stops it again.
#
#   deploy/crd/gen/fetch-openapi.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
case "${1:-}" in
  -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
  "") ;;
  *) echo "fetch-openapi.sh: no arguments (see --help)" >&2; exit 2 ;;
esac
unset NCCLOP_KUBE_MINOR   # the default minor, whatever this shell runs the matrix with
dir=$(mktemp -d)
cleanup() { "$root/tests/harness/controlplane/controlplane.sh" down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"$root/tests/harness/controlplane/controlplane.sh" up --dir "$dir" >&2
# shellcheck source=/dev/null
source "$dir/env"
"$CONTROLPLANE_BIN/kubectl" get --raw /openapi/v3/api/v1 | "$here/gen-template-schema.py" --save-openapi
ls -l "$here"/openapi-*.json
