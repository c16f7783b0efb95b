# Sourced by scripts that need Debian packages on the machine (setup.sh, fuzz.sh,
# tests/harness/images/build.sh).
#
#   debian_install_missing <who> <package>...   installs those of the packages that are not
#                                               installed (apt-get, as root or through sudo),
#                                               refreshing the package lists only when the
#                                               install fails without; <who> names the caller
#                                               in its one log line
# Another apt-get (a parallel setup) may hold dpkg's lock for a while: it is waited for.

debian_install_missing() {
  local who=$1 p; shift
  local missing=() apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q)
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "[$who] installing Debian packages: ${missing[*]}" >&2
  [ "$(id -u)" -eq 0 ] || apt=(sudo "${apt[@]}")
  "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || { "${apt[@]}" update >/dev/null && "${apt[@]}" install --no-install-recommends "${missing[@]}" >/dev/null; }
}
