#!/bin/sh
# Puts one dynamically linked binary, the shared libraries it loads (as ldd resolves them:
# glibc's, since libstdc++, libcurl, OpenSSL/mbedTLS and cpp-httplib are linked in), the CA
# bundle and a passwd/group naming the unprivileged user 65532 into ROOT, the whole filesystem
# of a FROM scratch image. Run inside the build stage of deploy/docker/Dockerfile.
#
#   deploy/docker/stage-rootfs.sh ROOT BINARY
set -eu
[ $# -eq 2 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
root=$1 binary=$2
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
cp "$binary" "$root/usr/local/bin/"
strip "$root/usr/local/bin/$(basename "$binary")"
# ldd lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and the loader's own
# "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | while read -r lib; do
  # The path as the binary names it (a symlink such as /lib64/ld-linux-x86-64.so.2) and the file.
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
