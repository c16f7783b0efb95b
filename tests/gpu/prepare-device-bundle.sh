#!/usr/bin/env bash
# Builds the runtime tools, the benchmark and the sidecar here and gathers them into
# build-device/ (ignored by git; the device tool carries it): bin/ with the programs, lib/ with the
# sidecar's shared libraries (the GPU machine's image has no cpp-httplib or libcurl) and the
# pinned CUDA runtime. NCCL itself (190 MB) is too large to carry: run-on-device.sh uses the
# image's NCCL wheel (same soname, libnccl.so.2).
#   tests/gpu/prepare-device-bundle.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-${repo}/build-runtime-full}"
out="${repo}/build-device"
cmake --build "${build}" -j2 --target nccl-allreduce nccl-k8s-id nccl-allreduce-bench nccl-sidecar
rm -rf "${out}"
mkdir -p "${out}/bin" "${out}/lib"
for b in runtime/nccl-allreduce runtime/nccl-k8s-id bench/allreduce/nccl-allreduce-bench sidecar/nccl-sidecar; do
  cp "${build}/${b}" "${out}/bin/"
done
strip --strip-debug "${out}"/bin/*
# Shared libraries of the sidecar, except the C/C++ runtime the image has in newer versions.
ldd "${out}/bin/nccl-sidecar" | awk '/=> \//{print $3}' \
  | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' \
  | xargs -r cp -L -t "${out}/lib/" || true   # none when the sidecar is linked self-contained
cp -L "${repo}/.deps/python/nvidia/cu13/lib/libcudart.so.13" "${out}/lib/"
# iproute2's ip for the network-namespace GPU test (the GPU machine's image may lack it): the
# binary, its libraries, and a wrapper that runs it through the machine's own loader with those
# libraries, so nothing it starts (ip netns exec) inherits a library path.
if ip_bin=$(command -v ip); then
  mkdir -p "${out}/tools/lib"
  cp -L "${ip_bin}" "${out}/tools/ip.bin"
  ldd "${ip_bin}" | awk '/=> \//{print $3}' | grep -Ev '/(libc|ld-linux[^/]*)\.so' | xargs -r cp -L -t "${out}/tools/lib/"
  cat >"${out}/tools/ip" <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
exec /lib64/ld-linux-x86-64.so.2 --library-path "$here/lib" "$here/ip.bin" "$@"
WRAP
  chmod +x "${out}/tools/ip"
fi
du -sh "${out}"
