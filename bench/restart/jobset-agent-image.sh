#!/usr/bin/env bash
# JobSet's in-place restart agent (cmd/in-place-restart-agent of sigs.k8s.io/jobset at
# $JOBSET_VERSION, built static from its module by bench/jobset/build.sh) as an image on the
# loopback registry of tests/harness/images/build.sh. BuildKit (the same tools, root and lock as
# build.sh) makes what the module's cmd/in-place-restart-agent/Dockerfile makes on a distroless
# static base: the one static binary, run as 65532, as the entrypoint. Nothing of JobSet enters
# this repository.
#
#   bench/restart/jobset-agent-image.sh --dir D   D holds registry.env (build.sh up --dir D);
#                                                 prints the image's reference on the last line
#
# The tag is the version and a hash of the binary: a second run only asks the registry. Needs
# root (buildkitd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
log() { echo "[jobset-agent-image] $*" >&2; }
die() { echo "bench/restart/jobset-agent-image.sh: $*" >&2; exit 1; }
dir=""
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (--help)" ;;
  esac
done
[ -f "$dir/registry.env" ] || die "no $dir/registry.env: tests/harness/images/build.sh up --dir $dir first"
# shellcheck source=/dev/null
source "$dir/registry.env"
# shellcheck source=../../tests/harness/versions.env
source "$root/tests/harness/versions.env"
state=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}/images

agent_dir=$("$root/bench/jobset/build.sh" | tail -1)
binary=$agent_dir/in-place-restart-agent
ref=$REGISTRY/jobset/in-place-restart-agent:$JOBSET_VERSION-$(sha256sum "$binary" | cut -c1-12)

has_image() {
  curl -sf -o /dev/null -I -H 'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json' \
    "http://$REGISTRY/v2/jobset/in-place-restart-agent/manifests/${ref##*:}"
}
if has_image; then echo "$ref"; exit 0; fi

work=$(mktemp -d)
bkpid=""
cleanup() {
  if [ -n "$bkpid" ]; then kill "$bkpid" 2>/dev/null || true; wait "$bkpid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# build.sh's BuildKit root is shared: one buildkitd on it at a time.
exec 9>"$state/.lock"
flock 9
mkdir -p "$work/ctx"
cp "$binary" "$work/ctx/"
cat >"$work/ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY in-place-restart-agent /in-place-restart-agent
USER 65532:65532
ENTRYPOINT ["/in-place-restart-agent"]
DOCKERFILE
cat >"$work/buildkitd.toml" <<TOML
root = "$state/buildkit"
[worker.oci]
  enabled = true
[worker.containerd]
  enabled = false
[registry."$REGISTRY"]
  http = true
TOML
sock=$work/buildkitd.sock
"$IMAGES_BIN/buildkitd" --config "$work/buildkitd.toml" --addr "unix://$sock" --oci-worker=true \
  --containerd-worker=false >"$work/buildkitd.log" 2>&1 9>&- &
bkpid=$!
deadline=$(( $(date +%s) + 60 ))
until "$IMAGES_BIN/buildctl" --addr "unix://$sock" debug workers >/dev/null 2>&1; do
  kill -0 "$bkpid" 2>/dev/null || { tail -20 "$work/buildkitd.log" >&2; die "buildkitd exited"; }
  [ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$work/buildkitd.log" >&2; die "buildkitd not ready after 60 s"; }
  sleep 0.2
done
log "building $ref"
"$IMAGES_BIN/buildctl" --addr "unix://$sock" build --progress=plain --frontend dockerfile.v0 \
  --local context="$work/ctx" --local dockerfile="$work/ctx" \
  --output "type=image,name=$ref,push=true" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; die "building the agent image failed"; }
echo "$ref"
