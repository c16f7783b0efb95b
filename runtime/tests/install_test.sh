#!/usr/bin/env bash
# Installs the build's runtime into a temporary prefix and builds a trainer against it the two
# ways runtime/README.md documents (CMake package, pkg-config), then runs them: both must get
# past linking and loading (RPATH to NCCL and the CUDA runtime) and report the missing env.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1; src=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build/runtime" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/include/nccl_k8s/runtime.h"
cmake -S "$src/runtime/tests/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
for exe in consumer_cpp consumer_c_static; do
  out=$(env -u LD_LIBRARY_PATH "$work/consumer/$exe") || { echo "FAIL $exe: $out"; exit 1; }
  grep -q "NCCLJOB_SIDECAR_URL" <<<"$out" || { echo "FAIL $exe does not name the missing variables: $out"; exit 1; }
  echo "ok $exe: ${out:0:100}"
done
pc="$prefix/lib/pkgconfig"; [ -d "$pc" ] || pc=$(dirname "$(find "$prefix" -name nccl-k8s.pc | head -1)")
# shellcheck disable=SC2046
g++ -std=c++20 -o "$work/consumer_pc" "$src/runtime/tests/consumer/consumer.cc" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs nccl-k8s)
out=$(env -u LD_LIBRARY_PATH "$work/consumer_pc") || { echo "FAIL pkg-config consumer: $out"; exit 1; }
grep -q "NCCLJOB_SIDECAR_URL" <<<"$out" || { echo "FAIL pkg-config consumer: $out"; exit 1; }
echo "ok pkg-config consumer"
