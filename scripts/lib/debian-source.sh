# Sourced by scripts that take a Debian source package from the machine's own archive
# (build-lean-curl.sh, fetch-httplib-header.sh). A private apt configuration: the system's
# deb entries turned into deb-src, with their own index directory, so nothing under /etc/apt
# or /var/lib/apt changes and no archive host is written anywhere.
#
#   debian_source_cache            the cache dir (sources, .dsc files, the private apt state)
#   debian_source_download NAME=V  downloads NAME's source package of version V into the cache;
#                                  refreshes the private index first only when needed
# Both need `debian_source_who` (a script name for messages) set by the caller.

debian_source_cache="${XDG_CACHE_HOME:-$HOME/.cache}/nccl-operator/src"
debian_source_apt_state="$debian_source_cache/apt"
debian_source_apt_opts=(
  -o "Dir::Etc::SourceList=/dev/null"
  -o "Dir::Etc::SourceParts=$debian_source_apt_state/sources.list.d"
  -o "Dir::State::Lists=$debian_source_apt_state/lists"
  -o "Dir::Cache=$debian_source_apt_state/cache"
  -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
)

debian_source_refresh() {
  local state=$debian_source_apt_state found=0 f
  rm -rf "$state"
  mkdir -p "$state/sources.list.d" "$state/lists/partial" "$state/cache/archives/partial"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed -e 's/^Types:.*$/Types: deb-src/' "$f" >"$state/sources.list.d/$(basename "$f")"
    found=1
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n -e 's/^[[:space:]]*deb\([[:space:]]\)/deb-src\1/p' "$f" >"$state/sources.list.d/$(basename "$f")"
    found=1
  done
  if [ "$found" -eq 0 ]; then
    echo "$debian_source_who: no apt sources under /etc/apt to derive deb-src entries from" >&2
    return 1
  fi
  apt-get "${debian_source_apt_opts[@]}" update -q >/dev/null 2>&1
}

debian_source_fetch() {
  (cd "$debian_source_cache" && apt-get "${debian_source_apt_opts[@]}" source --download-only -q "$1" >/dev/null 2>&1)
}

debian_source_download() {
  command -v dpkg-source >/dev/null || {
    echo "$debian_source_who: dpkg-source is missing; install dpkg-dev (scripts/setup.sh does)" >&2; return 1; }
  mkdir -p "$debian_source_cache"
  # An index another script left behind is usually recent enough; refresh it only if not.
  if [ -d "$debian_source_apt_state/lists" ] && debian_source_fetch "$1"; then return 0; fi
  debian_source_refresh && debian_source_fetch "$1"
}
