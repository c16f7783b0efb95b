#!/usr/bin/env bash
# The node's Go unit tests (ctest node.unit), built with the flags of the node's own build
# (scripts/lib/go-module.sh): go test then finds the node's dependencies (client-go and the rest)
# already compiled by tests/harness/node/build.sh, rather than compiling them again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
go_module_env
cd "$here"
GOFLAGS="$GOFLAGS -mod=mod" exec go test ./... "$@"
