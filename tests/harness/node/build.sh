#!/usr/bin/env bash
# Builds testnode (the local node, see README.md) into a cache directory keyed by a hash of
# its sources; a second run with unchanged sources returns at once. Prints the binary path
# on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
cache=$go_module_cache
hash=$(cd "$here" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)
bin="$cache/testnode/$hash/testnode"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$(dirname "$bin")"
echo "[testnode-build] building $bin" >&2
# Tests running in parallel may build at the same time: each writes its own file and the
# rename is atomic, so the last one wins with the same bytes.
tmp="$bin.tmp.$$"
(cd "$here" && go_module_env && go build -ldflags "-s -w" -o "$tmp" .)
mv -f "$tmp" "$bin"
echo "$bin"
