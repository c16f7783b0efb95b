#!/usr/bin/env bash
# Puts cpp-httplib's single header (declarations and implementation in one httplib.h) from
# Debian's own cpp-httplib source package, with Debian's patches applied, into the project
# prefix .deps/httplib/include, for the sidecar.
#
# Why: Debian ships cpp-httplib split (a declarations-only header + libcpp-httplib.so) and
# builds the .so with OpenSSL, zlib and brotli, so every process that links it loads
# libssl/libcrypto/libz/libbrotli* and libstdc++ as shared libraries (~5 MB of the sidecar's
# resident memory) and cannot link libstdc++/OpenSSL statically. The sidecar serves plain
# HTTP on loopback; compiled in without CPPHTTPLIB_OPENSSL_SUPPORT, httplib needs none of them.
#
#   scripts/fetch-httplib-header.sh [--prefix DIR] [--force]
#
# Idempotent: does nothing when DIR/include/httplib.h exists and DIR/.stamp matches the source
# version. The source comes from the machine's configured Debian archive (the deb lines turned
# into deb-src in a private apt state, as scripts/build-lean-curl.sh does, so the system's apt
# configuration is left untouched) and is cached in ~/.cache/nccl-operator/src. On failure it
# exits non-zero and leaves no header behind; the build then links Debian's libcpp-httplib.so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.deps/httplib"
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "fetch-httplib-header.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[httplib-header] $*" >&2; }

# The version of the cpp-httplib the system carries is the one we take the header of, so the
# header-only build and the fallback (Debian's split build) are the same code.
version=$(dpkg-query -W -f='${source:Version}' libcpp-httplib-dev 2>/dev/null || true)
if [ -z "$version" ]; then
  echo "fetch-httplib-header.sh: libcpp-httplib-dev is not installed; run scripts/setup.sh" >&2
  exit 1
fi
stamp="cpp-httplib $version"
header="$prefix/include/httplib.h"
if [ "$force" -eq 0 ] && [ -f "$header" ] && [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$stamp" ]; then
  log "up to date: $header ($stamp)"
  exit 0
fi

# shellcheck source=lib/debian-source.sh
debian_source_who=fetch-httplib-header.sh; source "$root/scripts/lib/debian-source.sh"
cache=$debian_source_cache
dsc="$cache/cpp-httplib_${version#*:}.dsc"

if [ ! -f "$dsc" ]; then
  log "fetching the Debian source of cpp-httplib $version"
  debian_source_download "cpp-httplib=$version" || {
    echo "fetch-httplib-header.sh: could not download the source of cpp-httplib=$version from the" \
         "configured Debian archive (offline, or the version is gone: apt-get update && apt-get" \
         "upgrade libcpp-httplib-dev)" >&2
    exit 1; }
fi

work=$(mktemp -d "$cache/cpp-httplib.XXXXXX")
trap 'rm -rf "$work"' EXIT
# dpkg-source applies Debian's patches (security fixes) to the upstream header.
(cd "$cache" && dpkg-source --no-check -x "$dsc" "$work/src" >/dev/null)
src_header="$work/src/httplib.h"
upstream_version=${version#*:}
upstream_version=${upstream_version%%+*}
upstream_version=${upstream_version%%-*}
# The single header carries the implementation; Debian's installed one is declarations only.
if [ ! -f "$src_header" ] || ! grep -q "^#define CPPHTTPLIB_VERSION \"$upstream_version\"" "$src_header" \
   || ! grep -q "^inline bool Server::listen_internal()" "$src_header"; then
  echo "fetch-httplib-header.sh: the cpp-httplib $version source has no single-header httplib.h" \
       "of version $upstream_version; the build falls back to Debian's libcpp-httplib.so" >&2
  exit 1
fi
rm -rf "$prefix"
install -m 644 -D "$src_header" "$header"
install -m 644 "$work/src/LICENSE" "$prefix/LICENSE"
printf '%s' "$stamp" >"$prefix/.stamp"
log "installed $header ($stamp)"
