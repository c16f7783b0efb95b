#!/usr/bin/env bash
# Checks the images that `tests/harness/images/build.sh up --dir D` pushed, as a node would get
# them: each is pulled from the registry and unpacked, then
#   - operator, sidecar: at most $IMAGE_SIZE_GOAL bytes unpacked (default 20 MB); the
#     entrypoint of the image config runs `--help` in the unpacked root (chroot, as the image's
#     user 65532, no shell or library from this machine); the binary is lean: it loads no
#     libstdc++, libcurl, OpenSSL, mbedTLS or cpp-httplib library (they are linked in);
#   - trainer: nccl-allreduce and nccl-k8s-id run `--help` there, every library they load is found;
#   - each: its OCI labels and SBOM (check_sbom.py: SPDX document, dpkg records scanners read, the
#     wheels' metadata, the driver the trainer needs).
#
#   tests/harness/images/check.sh --dir D
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "check.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$dir" ] && [ -f "$dir/registry.env" ] || { echo "check.sh: no $dir/registry.env; run build.sh up --dir D first" >&2; exit 2; }
# shellcheck source=/dev/null
source "$dir/registry.env"
goal=${IMAGE_SIZE_GOAL:-20000000}
work=$(mktemp -d "$dir/check.XXXXXX")
chmod 755 "$work"   # each unpacked root is / for uid 65532, who must be able to enter it
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

unpack() {  # unpack <image ref> <dir>: prints the image config
  python3 "$here/registry.py" unpack "$REGISTRY" "${1#"$REGISTRY"/}" "$2"
}
config_field() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["config"]; v=c.get(sys.argv[2]); print(json.dumps(v) if isinstance(v,list) else (v or ""))' "$1" "$2"; }

check_lean_image() {  # check_lean_image <name> <image ref> <binary>
  local name=$1 ref=$2 binary=$3 rootfs="$work/$1"
  mkdir -m 755 "$rootfs"
  unpack "$ref" "$rootfs" > "$work/$name.json"
  local size; size=$(awk -v r="$ref" '$1 == r {print $3}' "$dir/images.txt")
  if [ -n "$size" ] && [ "$size" -le "$goal" ]; then ok "$name image $size bytes unpacked (goal $goal)"
  else fail "$name image is ${size:-?} bytes unpacked, over the goal of $goal"; fi
  local entrypoint user
  entrypoint=$(config_field "$work/$name.json" Entrypoint)
  user=$(config_field "$work/$name.json" User)
  [ "$entrypoint" = "[\"/usr/local/bin/$binary\"]" ] || fail "$name entrypoint is $entrypoint"
  [ "$user" = "65532:65532" ] || fail "$name runs as '$user', not 65532:65532"
  local out rc=0
  out=$(chroot --userspec=65532:65532 "$rootfs" "/usr/local/bin/$binary" --help 2>&1) || rc=$?
  if [ "$rc" -eq 0 ] && grep -q "^Usage: $binary" <<<"$out"; then ok "$name: $binary --help runs in the image as 65532"
  else fail "$name: $binary --help in the image exited $rc: $(head -c 400 <<<"$out")"; fi
  local needed heavy
  needed=$(readelf -d "$rootfs/usr/local/bin/$binary" | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}' | tr '\n' ' ')
  heavy=$(tr ' ' '\n' <<<"$needed" | grep -E '^lib(stdc\+\+|curl|ssl|crypto|mbed|cpp-httplib|gcc_s)' || true)
  if [ -z "$heavy" ]; then ok "$name: $binary is lean (loads only: $needed)"
  else fail "$name: $binary loads $(echo $heavy) as shared libraries (lean builds missing in the image build?)"; fi
}

check_trainer() {
  local rootfs="$work/trainer" tool out rc
  mkdir -m 755 "$rootfs"
  unpack "$TRAINER_IMAGE" "$rootfs" > "$work/trainer.json"
  for tool in nccl-allreduce nccl-k8s-id; do
    rc=0
    out=$(chroot --userspec=65532:65532 "$rootfs" "/usr/local/bin/$tool" --help 2>&1) || rc=$?
    if [ "$rc" -eq 0 ] && grep -qi "usage" <<<"$out"; then ok "trainer: $tool --help runs in the image"
    else fail "trainer: $tool --help exited $rc: $(head -c 400 <<<"$out")"; fi
    out=$(chroot "$rootfs" ldd "/usr/local/bin/$tool" 2>&1) || true
    if grep -q "not found" <<<"$out"; then fail "trainer: $tool misses libraries: $(grep 'not found' <<<"$out" | tr '\n' ' ')"
    else ok "trainer: every library of $tool is found ($(grep -o 'lib\(nccl\|cudart\)[^ ]*' <<<"$out" | sort -u | tr '\n' ' '))"; fi
  done
}

check_sbom() {  # check_sbom <name>: after its image is unpacked into $work/<name>
  local version out rc=0
  version=$(tr -d '[:space:]' <"$here/../../../VERSION")
  out=$(python3 "$here/check_sbom.py" "nccl-$1" "$work/$1" "$work/$1.json" "$version" 2>&1) || rc=$?
  grep '^ok: ' <<<"$out" || true
  grep -v '^ok: ' <<<"$out" >&2 || true
  [ "$rc" -eq 0 ] || fail "$1: labels or SBOM (above)"
}

check_lean_image operator "$OPERATOR_IMAGE" nccl-operator
check_lean_image sidecar "$SIDECAR_IMAGE" nccl-sidecar
check_trainer
for image in operator sidecar trainer; do check_sbom "$image"; done
cat "$dir/images.txt"
[ "$failures" -eq 0 ] || { echo "$failures image check(s) failed" >&2; exit 1; }
echo "every image check passed"
