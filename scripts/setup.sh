#!/usr/bin/env bash
# One setup for a fresh machine (Debian bookworm, root or sudo): system packages, the NVIDIA
# wheels (NCCL + CUDA runtime), a lean static libcurl and cpp-httplib's single header in the
# project-local prefix .deps/, the local control plane binaries (cached by version), and the
# C++ build in build/. Safe to run again: each step skips what is already there.
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

if [ "$do_build" -eq 1 ]; then
  log "building into $build_dir"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build_dir" -j "$(nproc)"
  log "the Python package (python/) into $build_dir/python-venv"
  "$root/python/scripts/install-venv.sh" "$build_dir" >/dev/null
fi
log "done in $(( $(date +%s) - t0 ))s"
