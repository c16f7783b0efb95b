#!/usr/bin/env bash
# One setup for a fresh machine (Debian bookworm, root or sudo): system packages, the NVIDIA
# wheels (NCCL + CUDA runtime), a lean static libcurl and cpp-httplib's single header in the
# project-local prefix .deps/, the harness's Go-built programs (control plane, test and real node,
# Kueue, KWOK, BuildKit; cached by version, built in a second lane beside the C++), and the C++
# build in build/. Safe to run again: each step skips what is already there.
#
#   scripts/setup.sh [--build-dir DIR] [--no-build]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build"
do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[setup] $*" >&2; }
t0=$(date +%s)

packages=(build-essential cmake ninja-build pkg-config git curl openssl iproute2 python3 python3-pip
          libcurl4-openssl-dev libssl-dev libboost1.74-dev libcpp-httplib-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev python3-yaml dpkg-dev xz-utils libmbedtls-dev
          python3-venv python3-pytest iptables libseccomp-dev ccache)
# shellcheck source=lib/debian-packages.sh
source "$root/scripts/lib/debian-packages.sh"
debian_install_missing setup "${packages[@]}"

# The Go-built parts (control plane, test node, Kueue, KWOK, the real node, BuildKit) share nothing with the
# C++ build but the packages above: they build in a second lane beside it, their module downloads
# and single-threaded links filling the time the compiler leaves.
go_lane() {
  log "control plane binaries (cached by version)"
  "$root/tests/harness/controlplane/build.sh" >/dev/null
  log "the local test node (cached by a hash of its sources)"
  "$root/tests/harness/node/build.sh" >/dev/null
  log "Kueue for the shared-cluster tests (cached by version)"
  "$root/tests/harness/kueue/build.sh" >/dev/null
  log "KWOK for the scale bench (cached by version)"
  "$root/bench/scale/build.sh" >/dev/null
  log "the real node: kubelet, kube-scheduler, kube-proxy, containerd, runc, CNI plugins, CoreDNS (cached by version)"
  "$root/tests/harness/realnode/build.sh" >/dev/null
  log "BuildKit and a registry for the images (cached by version)"
  "$root/tests/harness/images/build.sh" tools >/dev/null
}
go_log=$(mktemp "${TMPDIR:-/tmp}/ncclop-setup-go.XXXXXX")
go_pid=""
# A setup that fails or is stopped stops the lane too (its steps cache only finished binaries).
trap '[ -z "$go_pid" ] || { pkill -TERM -P "$go_pid"; kill "$go_pid"; } 2>/dev/null; rm -f "$go_log"' EXIT
log "the Go-built parts in a second lane (its log follows when it ends)"
( set -e; go_lane ) >"$go_log" 2>&1 &
go_pid=$!
wait_go_lane() {
  local rc=0
  wait "$go_pid" || rc=$?
  go_pid=""
  sed 's/^/  /' "$go_log" >&2
  [ "$rc" -eq 0 ] || { log "the Go-built parts failed (exit $rc); see above"; exit "$rc"; }
}

log "lean static libcurl in .deps/curl (cached by version)"
# Only memory depends on it: without it the build links Debian's libcurl and still works.
"$root/scripts/build-lean-curl.sh" || log "warning: the lean libcurl could not be built; using Debian's libcurl (larger RSS)"
log "lean static libcurl over mbedTLS in .deps/curl-mbedtls, the sidecar's (cached by version)"
"$root/scripts/build-lean-curl.sh" --tls mbedtls \
  || log "warning: the mbedTLS libcurl could not be built; the sidecar uses the OpenSSL one (~3 MB more RSS)"

log "single-header cpp-httplib in .deps/httplib (cached by version)"
# Only memory depends on it: without it the sidecar links Debian's libcpp-httplib.so and still works.
"$root/scripts/fetch-httplib-header.sh" \
  || log "warning: no single-header cpp-httplib; the sidecar links Debian's libcpp-httplib.so (larger RSS)"

if [ -x "$root/scripts/install-nvidia-wheels.sh" ]; then
  "$root/scripts/install-nvidia-wheels.sh"
fi

if [ "$do_build" -eq 1 ]; then
  log "building into $build_dir"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build_dir" -j "$(nproc)"
  log "the Python package (python/) into $build_dir/python-venv"
  "$root/python/scripts/install-venv.sh" "$build_dir" >/dev/null
fi
wait_go_lane
log "done in $(( $(date +%s) - t0 ))s"
