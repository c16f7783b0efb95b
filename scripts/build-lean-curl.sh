#!/usr/bin/env bash
# Builds a lean static libcurl (HTTP/HTTPS only) from Debian's own curl source package into
# the project prefix: over OpenSSL in .deps/curl (the operator), over mbedTLS in
# .deps/curl-mbedtls (the sidecar: its TLS code is ~1/5 of OpenSSL's, see sidecar/README.md).
#
# Why: Debian's libcurl4 drags ~30 shared libraries (ldap, rtmp, ssh2, gssapi, gnutls,
# nghttp2, idn2, psl, zstd, brotli, ...) into every process; their file-backed pages alone
# cost the operator and the sidecar several MiB of resident memory. The API client only
# needs HTTP/1.1 over TLS with client certificates.
#
#   scripts/build-lean-curl.sh [--tls openssl|mbedtls] [--prefix DIR] [--force]
#
# Idempotent: does nothing when DIR/lib/libcurl.a exists and DIR/.stamp matches the source
# version and the options below. The source comes from the machine's configured Debian
# archive (the deb lines turned into deb-src in a private apt state, so the system's apt
# configuration is left untouched) and is cached in ~/.cache/nccl-operator/src.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=""
tls=openssl
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tls) tls=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build-lean-curl.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$tls" in
  openssl) tls_options=(--with-openssl); [ -n "$prefix" ] || prefix="$root/.deps/curl" ;;
  mbedtls)
    tls_options=(--without-openssl --with-mbedtls)
    [ -n "$prefix" ] || prefix="$root/.deps/curl-mbedtls"
    [ -f /usr/include/mbedtls/ssl.h ] || {
      echo "build-lean-curl.sh: mbedTLS headers are missing; install libmbedtls-dev (scripts/setup.sh does)" >&2
      exit 1; } ;;
  *) echo "build-lean-curl.sh: --tls must be openssl or mbedtls, not $tls" >&2; exit 2 ;;
esac
log() { echo "[lean-curl $tls] $*" >&2; }

# Only what the Kubernetes API client uses; everything else is switched off so that no
# optional library is found and linked by accident. Verbose strings stay: without them
# curl_easy_strerror() answers just "Error", and our messages must tell the user what failed.
configure_options=(
  --disable-shared --enable-static --with-pic
  "${tls_options[@]}" --without-zlib
  --without-librtmp --without-libssh2 --without-libssh --without-wolfssh
  --without-nghttp2 --without-nghttp3 --without-ngtcp2 --without-quiche --without-msh3
  --without-libidn2 --without-libpsl --without-gssapi --without-zstd --without-brotli
  --without-libgsasl --without-hyper --without-ca-fallback
  --disable-ldap --disable-ldaps --disable-ftp --disable-file --disable-dict --disable-telnet
  --disable-tftp --disable-pop3 --disable-imap --disable-smtp --disable-gopher --disable-mqtt
  --disable-rtsp --disable-smb --disable-manual --disable-ntlm --disable-ntlm-wb
  --disable-alt-svc --disable-hsts --disable-netrc --disable-unix-sockets
  --disable-cookies --disable-mime --disable-doh --disable-tls-srp --disable-crypto-auth
  --disable-dnsshuffle --disable-get-easy-options --disable-websockets
  --disable-libcurl-option --enable-symbol-hiding
  --enable-threaded-resolver
)
cflags="-O2 -g0 -fPIC -ffunction-sections -fdata-sections"

# The version of the curl the system carries is the one we rebuild.
version=$(dpkg-query -W -f='${source:Version}' libcurl4-openssl-dev 2>/dev/null || true)
[ -n "$version" ] || version=$(dpkg-query -W -f='${source:Version}' libcurl4 2>/dev/null || true)
if [ -z "$version" ]; then
  echo "build-lean-curl.sh: neither libcurl4-openssl-dev nor libcurl4 is installed; run scripts/setup.sh" >&2
  exit 1
fi
stamp="curl $version | $cflags | ${configure_options[*]}"
if [ "$force" -eq 0 ] && [ -f "$prefix/lib/libcurl.a" ] && [ "$(cat "$prefix/.stamp" 2>/dev/null)" = "$stamp" ]; then
  log "up to date: $prefix (curl $version)"
  exit 0
fi

# shellcheck source=lib/debian-source.sh
debian_source_who=build-lean-curl.sh; source "$root/scripts/lib/debian-source.sh"
cache=$debian_source_cache
src_dir="$cache/curl-$version"

if [ ! -f "$src_dir/configure" ]; then
  if [ ! -f "$cache/curl_${version#*:}.dsc" ]; then
    log "fetching the Debian source of curl $version"
    debian_source_download "curl=$version" || {
      echo "build-lean-curl.sh: could not download the source of curl=$version from the configured" \
           "Debian archive (offline, or the version is gone: apt-get update && apt-get upgrade libcurl4-openssl-dev)" >&2
      exit 1; }
  fi
  log "unpacking into $src_dir"
  rm -rf "$src_dir"
  (cd "$cache" && dpkg-source --no-check -x "curl_${version#*:}.dsc" "$src_dir" >/dev/null)
  if [ ! -f "$src_dir/configure" ]; then  # Debian builds configure with autoreconf
    (cd "$src_dir" && autoreconf -fi >/dev/null 2>&1) || {
      echo "build-lean-curl.sh: $src_dir has no configure and autoreconf failed; install autoconf automake libtool" >&2
      exit 1; }
  fi
fi

t0=$(date +%s)
build="$src_dir/build-lean"
[ "$tls" = openssl ] || build="$src_dir/build-lean-$tls"
rm -rf "$build" "$prefix"
mkdir -p "$build"
log "configuring (log: $build/configure.log)"
(cd "$build" && CFLAGS="$cflags" "$src_dir/configure" --prefix="$prefix" "${configure_options[@]}" \
  >configure.log 2>&1) || { tail -30 "$build/configure.log" >&2; exit 1; }
log "building lib/ with make -j${JOBS:-2}"
make -C "$build/lib" -j"${JOBS:-2}" >"$build/make.log" 2>&1 || { tail -30 "$build/make.log" >&2; exit 1; }
make -C "$build/lib" install >>"$build/make.log" 2>&1
make -C "$build/include" install >>"$build/make.log" 2>&1
install -m 644 "$build/libcurl.pc" -D "$prefix/lib/pkgconfig/libcurl.pc"
printf '%s' "$stamp" >"$prefix/.stamp"
log "installed $prefix/lib/libcurl.a (curl $version) in $(( $(date +%s) - t0 ))s"
