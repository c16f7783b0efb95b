#!/usr/bin/env bash
# The layer check (docs/DESIGN.md, "Where things live"): the pure parts never reach for I/O.
#   1. operator/src/{api,observed,desired,policy,status,cache}, flags/metrics and cli/ (the flag
#      table) include no controller, manager, HTTP server, Kubernetes client or libcurl/Boost
#      header; kube/core includes nothing of kube/client; contract/ includes only the standard
#      library.
#   2. The built libraries ncclop_operator_core and ncclop_kube_core need no libcurl, Boost.Asio
#      or client symbol (nm: their undefined symbols).
#
#   check_layers.sh SOURCE_DIR [OPERATOR_CORE_ARCHIVE KUBE_CORE_ARCHIVE]
set -euo pipefail
src=${1:?usage: check_layers.sh SOURCE_DIR [OPERATOR_CORE_ARCHIVE KUBE_CORE_ARCHIVE]}
failed=0
fail() { echo "layer check: $*" >&2; failed=1; }

# 1. Includes.
io_headers='"(controller|manager|http)/|"kube/(client|informer|config|leader_election)\.h"|<curl/|<boost/|<httplib'
pure=(operator/src/api operator/src/observed operator/src/desired operator/src/policy operator/src/status
      operator/src/cache operator/src/flags.h operator/src/flags.cc operator/src/metrics cli/include cli/src)
for path in "${pure[@]}"; do
  [ -e "$src/$path" ] || fail "$path is missing (update tests/layers/check_layers.sh when folders move)"
done
while IFS= read -r hit; do fail "pure code includes I/O: $hit"; done < <(
  cd "$src" && grep -rnE "^#include ($io_headers)" "${pure[@]}" || true)
while IFS= read -r hit; do fail "kube/core includes the client: $hit"; done < <(
  cd "$src" && grep -rnE "^#include ($io_headers|\"(http|tls_server_name|yaml_subset)\.h\")" kube/core || true)
while IFS= read -r hit; do fail "contract/ includes more than the standard library: $hit"; done < <(
  cd "$src" && grep -rnE '^#include "' contract/include || true)

# 2. Symbols the pure libraries need from elsewhere.
if [ $# -ge 3 ]; then
  for archive in "$2" "$3"; do
    [ -f "$archive" ] || { fail "no archive $archive"; continue; }
    bad=$(nm -u --demangle "$archive" 2>/dev/null | grep -E ' (curl_|boost::asio|boost::beast|kube::Client|kube::Informer|kube::LeaderElector)' | sort -u | head -5 || true)
    [ -z "$bad" ] || fail "$(basename "$archive") needs I/O symbols:
$bad"
  done
fi

if [ "$failed" -ne 0 ]; then
  echo "layer check: FAILED (see docs/DESIGN.md, 'Where things live')" >&2
  exit 1
fi
echo "layer check: pure folders include no I/O; ncclop_operator_core and ncclop_kube_core need no network code"
