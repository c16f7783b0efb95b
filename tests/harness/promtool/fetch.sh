#!/usr/bin/env bash
# promtool, the Prometheus project's own rule checker, from Debian's prometheus package (bookworm's,
# PROMTOOL_DEB_VERSION in tests/harness/versions.env): the package is downloaded, not installed
# (no server is set up), and promtool alone is kept under $NCCLOP_CACHE (default
# ~/.cache/nccl-operator), by version; a second run returns at once. About 19 MB and a few
# seconds, so the chart's monitoring check runs it in CI. Prints promtool's path on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
bin="$cache/bin/promtool-$PROMTOOL_DEB_VERSION"
if [ ! -x "$bin/promtool" ]; then
  echo "[promtool] Debian's prometheus $PROMTOOL_DEB_VERSION: downloading the package for promtool" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && { apt-get download "prometheus=$PROMTOOL_DEB_VERSION" >/dev/null 2>&1 \
                   || { apt-get update >/dev/null && apt-get download "prometheus=$PROMTOOL_DEB_VERSION" >/dev/null; }; })
  dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
  mkdir -p "$bin"
  install -m 0755 "$work/root/usr/bin/promtool" "$bin/promtool"
fi
echo "$bin/promtool"
