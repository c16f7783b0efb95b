#!/usr/bin/env bash
# The operator, sidecar and trainer images, built from deploy/docker/Dockerfile by a real
# Dockerfile builder (BuildKit: buildkitd with its OCI worker, runc, as root; buildctl) and
# served by a registry on loopback. No Docker engine; nothing comes from outside but Debian
# packages, Go modules and the NVIDIA wheels (for the trainer image).
#
#   tests/harness/images/build.sh up --dir D     build the images (or reuse them: cached by a
#                                                hash of their inputs), leave a registry serving
#                                                them, write D/registry.env
#        [--binaries BUILD]                      the binaries of a CMake build directory already
#                                                built from this checkout stand in for the
#                                                Dockerfile's `build` stage (a BuildKit named
#                                                context), so the C++ is not compiled a second
#                                                time; every later stage runs as written. The
#                                                tests' fixture does this (RelWithDebInfo, -O2,
#                                                stripped); without it the images are built from
#                                                source, as a user's `docker build` does (Release)
#   tests/harness/images/build.sh down --dir D   stop what `up` started in D (always safe to call)
#   tests/harness/images/build.sh tools          build buildkitd, buildctl and registry (cached by
#                                                version); print their bin directory on the last line
#
# Contract for whoever runs the images (the real node, its e2e tests, the demo): after `up`,
#   source D/registry.env   REGISTRY=127.0.0.1:PORT  the registry: plain HTTP, loopback only
#                                                    (containerd: a hosts.toml for it whose server
#                                                    is http://127.0.0.1:PORT)
#                           REG=$REGISTRY/build-<hash>  where this build's images are: the hash is
#                                                    that of their inputs, so runs of different
#                                                    checkouts sharing the registry never mix
#                           IMAGE_TAG=0.1.0          the chart's appVersion: the tag the chart uses
#                                                    when none is set, as for a user
#                           OPERATOR_IMAGE, SIDECAR_IMAGE, TRAINER_IMAGE   $REG/nccl-<name>:$IMAGE_TAG
#                           DEBIAN_IMAGE=$REGISTRY/library/debian:bookworm-slim  (mmdebstrap-made)
#   D/images.txt            one line per image: ref, compressed bytes, uncompressed bytes
#   so the README's install commands run as they are written, with REG from registry.env:
#     helm install nccl-operator charts/nccl-operator -n nccl-system --create-namespace \
#       --set image.repository=$REG/nccl-operator --set sidecarImage.repository=$REG/nccl-sidecar
# The registry runs until `down`. Its storage is shared in the cache, so an `up` whose inputs
# are unchanged only starts it (a second or two). The builds are those of the README:
#   buildctl build --frontend dockerfile.v0 --local context=. --local dockerfile=deploy/docker \
#     --opt target=operator --opt build-arg:BUILD_IMAGE=$REGISTRY/library/debian:bookworm ...
# = docker build -f deploy/docker/Dockerfile --target operator . with the base on the registry.
#
# Cached under $NCCLOP_CACHE (default ~/.cache/nccl-operator): the tools by version
# (tests/harness/versions.env), the Debian base by suite and apt sources, BuildKit's cache, the registry's
# storage. Needs root (buildkitd's runc worker, mmdebstrap); installs runc and mmdebstrap
# (Debian packages) when missing. Several `up`s may run at once: building is serialised by a lock.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
cache=$go_module_cache
bin="$cache/bin/images-buildkit-$BUILDKIT_VERSION-registry-$REGISTRY_VERSION"
state="$cache/images"   # shared: lock, Debian base, BuildKit's root, registry storage, stamps
log() { echo "[images] $*" >&2; }
die() { echo "tests/harness/images/build.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }

cmd=${1:-}; shift || true
dir=""
binaries=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --binaries) binaries=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case "$cmd" in
  -h|--help|help) usage; exit 0 ;;
  tools) ;;
  up|down) [ -n "$dir" ] || die "$cmd needs --dir D (see --help)"
           mkdir -p "$dir"; dir=$(cd "$dir" && pwd) ;;
  *) usage >&2; exit 2 ;;
esac

# ---- tools: buildkitd, buildctl, registry from their Go modules -------------------------------
go_build_tools() {  # go_build_tools <module dir> <module@version> <version ldflags> <package>...
  local mod=$1 req=$2 vflags=$3; shift 3
  mkdir -p "$mod"
  (
    cd "$mod"
    go_module_env
    printf 'module local/%s\n\ngo 1.25.0\n' "$(basename "$mod")" > go.mod
    { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
      for p in "$@"; do echo "	_ \"$p\""; done; echo ')'; } > tools.go
    # `go install <module>@<version>` is refused for BuildKit (its go.mod has exclude
    # directives); a module that requires it builds its commands.
    go get "$req" >/dev/null 2>&1 || go get "$req"
    go mod tidy >/dev/null
    for p in "$@"; do
      local name; name=$(basename "$p")
      [ -x "$bin/$name" ] && continue
      log "building $name ($req)"
      go build -tags tools -ldflags "-s -w $vflags" -o "$bin/$name.tmp" "$p"
      mv "$bin/$name.tmp" "$bin/$name"
    done
  )
}

build_tools() {
  if [ -x "$bin/buildkitd" ] && [ -x "$bin/buildctl" ] && [ -x "$bin/registry" ]; then return 0; fi
  mkdir -p "$bin" "$cache/src"
  local t0; t0=$(date +%s)
  go_build_tools "$cache/src/buildkit-$BUILDKIT_VERSION" "github.com/moby/buildkit@$BUILDKIT_VERSION" \
    "-X github.com/moby/buildkit/version.Version=$BUILDKIT_VERSION" \
    github.com/moby/buildkit/cmd/buildkitd github.com/moby/buildkit/cmd/buildctl
  go_build_tools "$cache/src/registry-$REGISTRY_VERSION" \
    "github.com/distribution/distribution/v3@$REGISTRY_VERSION" \
    "-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
    github.com/distribution/distribution/v3/cmd/registry
  log "tools built in $(( $(date +%s) - t0 ))s: $bin"
}

# shellcheck source=../../../scripts/lib/debian-packages.sh
source "$root/scripts/lib/debian-packages.sh"

# ---- processes started in D -------------------------------------------------------------------
stop_pid_file() {  # stop_pid_file <file>: SIGTERM, wait up to 10 s, then SIGKILL
  local f=$1 pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  stop_pid_file "$dir/buildkitd.pid"
  stop_pid_file "$dir/registry.pid"
  rm -f "$dir/registry.env" "$dir/buildkitd.sock"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for() {  # wait_for <seconds> <what> <pid file> <command...>
  local secs=$1 what=$2 pidf=$3; shift 3
  local deadline=$(( $(date +%s) + secs ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$pidf")" 2>/dev/null || { tail -20 "$dir/logs/$what.log" >&2; die "$what exited"; }
    sleep 0.2
  done
  tail -20 "$dir/logs/$what.log" >&2; die "$what not ready after ${secs}s (log: $dir/logs/$what.log)"
}

start_registry() {
  local port; port=$(free_port)
  registry="127.0.0.1:$port"
  mkdir -p "$state/registry" "$dir/logs"
  cat > "$dir/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $state/registry
http:
  addr: $registry
EOF
  OTEL_TRACES_EXPORTER=none OTEL_SDK_DISABLED=true setsid "$bin/registry" serve "$dir/registry.yml" \
    >"$dir/logs/registry.log" 2>&1 < /dev/null 9>&- &   # not the build lock: the registry outlives `up`
  echo $! > "$dir/registry.pid"
  wait_for 30 registry "$dir/registry.pid" curl -sf "http://$registry/v2/"
  log "registry on $registry (storage $state/registry)"
}

start_buildkitd() {
  cat > "$dir/buildkitd.toml" <<EOF
root = "$state/buildkit"
[worker.oci]
  enabled = true
  gc = true
  # BuildKit's cache beyond this is collected (the trainer's NVIDIA wheels are most of it).
  reservedSpace = "2GB"
  maxUsedSpace = "12GB"
[worker.containerd]
  enabled = false
[registry."$registry"]
  http = true
EOF
  sock="$dir/buildkitd.sock"
  rm -f "$sock"
  # Host network for RUN steps: apt-get and pip inside the build reach the same package
  # archives as this machine; no CNI needed.
  setsid "$bin/buildkitd" --config "$dir/buildkitd.toml" --addr "unix://$sock" \
    --oci-worker=true --containerd-worker=false --oci-worker-net=host \
    >"$dir/logs/buildkitd.log" 2>&1 < /dev/null 9>&- &
  echo $! > "$dir/buildkitd.pid"
  wait_for 60 buildkitd "$dir/buildkitd.pid" "$bin/buildctl" --addr "unix://$sock" debug workers
}

buildctl() { "$bin/buildctl" --addr "unix://$sock" "$@"; }

# ---- the Debian base: mmdebstrap from this machine's Debian archive ----------------------------
# This machine's apt entries for the suite (deb822), nothing else: the image's apt reaches the
# same archive, and no archive host is written in this repository.
debian_sources() {
  python3 - "$DEBIAN_SUITE" <<'PY'
import glob, re, sys
suite = sys.argv[1]
ours = re.compile(r"^%s(-updates|-security|/updates)?$" % re.escape(suite))
out = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        fields, key = {}, None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:
                fields[key] += "\n" + line
                continue
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
        suites = [s for s in fields.get("Suites", "").split() if ours.match(s)]
        if "deb" not in fields.get("Types", "").split() or not suites:
            continue
        if "debian-archive-keyring" not in fields.get("Signed-By", "debian-archive-keyring"):
            continue
        out.append("Types: deb\nURIs: %s\nSuites: %s\nComponents: %s\nSigned-By: %s\n" % (
            fields["URIs"], " ".join(suites), fields.get("Components", "main"),
            fields.get("Signed-By", "/usr/share/keyrings/debian-archive-keyring.gpg")))
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        words = line.split("#")[0].split()
        if len(words) >= 4 and words[0] == "deb" and not words[1].startswith("[") and ours.match(words[2]):
            out.append("Types: deb\nURIs: %s\nSuites: %s\nComponents: %s\n"
                       "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (
                           words[1], words[2], " ".join(words[3:])))
if not out:
    sys.exit("no apt entries for Debian %s on this machine (/etc/apt)" % suite)
print("\n".join(out), end="")
PY
}

# What Debian's -slim images leave out; applies to the packages the build stage installs too.
slim_dpkg_options=(
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/groff/*' --dpkgopt='path-exclude=/usr/share/lintian/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias'
)

# One minbase root filesystem without docs (what debian:<suite>-slim is), pushed as both
# library/debian:<suite> (the build stage's base) and library/debian:<suite>-slim (the trainer's):
# the build stage needs nothing the docs would add, and one mmdebstrap run is half the time.
ensure_debian_base() {
  local sources key ctx
  sources=$(debian_sources) || die "cannot make the Debian base image"
  key=$(printf '%s\n%s\n%s\n' "$DEBIAN_SUITE" "$sources" "${slim_dpkg_options[*]}" | sha256sum | cut -c1-16)
  debian_image="$registry/library/debian:$DEBIAN_SUITE-slim"
  if [ "$(cat "$state/base.stamp" 2>/dev/null)" = "$key" ] && registry_has library/debian "$DEBIAN_SUITE" \
     && registry_has library/debian "$DEBIAN_SUITE-slim"; then
    return 0
  fi
  ctx="$state/base-$key"
  if [ ! -f "$ctx/rootfs.tar" ]; then
    debian_install_missing images mmdebstrap
    rm -rf "$state"/base-*; mkdir -p "$ctx"
    printf '%s\n' "$sources" > "$ctx/debian.sources"
    log "making the Debian $DEBIAN_SUITE base with mmdebstrap (minbase, no docs)"
    local t0; t0=$(date +%s)
    # Three tries, 30 and 90 s apart: at a cold run's start the archive's downloads failed at once
    # ("apt download failed") while PyTorch's 2.6 GB came down beside them, and passed later.
    local try
    for try in 1 2 3; do
      mmdebstrap --variant=minbase --mode=root --format=tar "${slim_dpkg_options[@]}" \
        "$DEBIAN_SUITE" "$ctx/rootfs.tar.tmp" "$ctx/debian.sources" >"$dir/logs/mmdebstrap.log" 2>&1 && break
      grep -v '^I: ' "$dir/logs/mmdebstrap.log" | tail -20 >&2
      [ "$try" -lt 3 ] || die "mmdebstrap failed three times (log: $dir/logs/mmdebstrap.log)"
      log "mmdebstrap failed; again in $(( try == 1 ? 30 : 90 ))s"
      rm -f "$ctx/rootfs.tar.tmp"
      sleep $(( try == 1 ? 30 : 90 ))
    done
    mv "$ctx/rootfs.tar.tmp" "$ctx/rootfs.tar"
    log "Debian base made in $(( $(date +%s) - t0 ))s"
  fi
  printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' > "$ctx/Dockerfile"
  log "pushing $registry/library/debian:$DEBIAN_SUITE and :$DEBIAN_SUITE-slim"
  buildctl build --progress=plain --frontend dockerfile.v0 --local context="$ctx" --local dockerfile="$ctx" \
    --output "type=image,\"name=$registry/library/debian:$DEBIAN_SUITE,$debian_image\",push=true" \
    >"$dir/logs/base-build.log" 2>&1 || { tail -30 "$dir/logs/base-build.log" >&2; die "pushing the base failed"; }
  printf '%s' "$key" > "$state/base.stamp"
}

registry_has() {  # registry_has <repository> <tag>
  curl -sf -o /dev/null -I \
    -H 'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json' \
    "http://$registry/v2/$1/manifests/$2"
}

# ---- the three images ---------------------------------------------------------------------------
# The chart's appVersion: the images' tag, so the chart's default tag finds them.
chart_app_version() {
  sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$root/charts/nccl-operator/Chart.yaml"
}

targets=(operator sidecar trainer)

# The files the build context sends (git's view of the checkout less what
# deploy/docker/Dockerfile.dockerignore leaves out), this folder and the versions file: the tag
# changes when any of them does.
inputs_hash() {
  (cd "$root" && git ls-files -z -co --exclude-standard) | python3 -c '
import fnmatch, hashlib, os, sys
root, ignore, *own = sys.argv[1:]
patterns = [l.strip() for l in open(ignore) if l.strip() and not l.startswith("#")]
def sent(path):
    for p in patterns:
        if p.startswith("**/"):
            if fnmatch.fnmatch(os.path.basename(path), p[3:]):
                return False
        elif path == p or path.startswith(p + "/") or fnmatch.fnmatch(path.split("/")[0], p):
            return False
    return True
files = sorted(f for f in sys.stdin.read().split("\0")
               if f and (sent(f) or any(f == o or f.startswith(o + "/") for o in own)))
if not files:
    sys.exit("%s is not a git checkout: cannot tell the build inputs" % root)
digest = hashlib.sha256()
for f in files:
    path = os.path.join(root, f)
    if os.path.isfile(path):
        digest.update(f.encode() + b"\0" + open(path, "rb").read())
print(digest.hexdigest()[:12])
' "$root" "$root/deploy/docker/Dockerfile.dockerignore" tests/harness/images tests/harness/versions.env
}

# The commit the images are built from, for their revision label ("-dirty": the tree had changes).
revision() {
  local head; head=$(git -C "$root" rev-parse HEAD 2>/dev/null) || { echo unknown; return; }
  git -C "$root" diff --quiet HEAD -- 2>/dev/null && echo "$head" || echo "$head-dirty"
}

# ---- --binaries: a build directory's binaries in place of the `build` stage ---------------------
# The files of the build directory that the images take (the targets the Dockerfile builds).
binary_files() {
  printf '%s\n' "$binaries/operator/nccl-operator" "$binaries/sidecar/nccl-sidecar" \
    "$binaries/runtime/nccl-allreduce" "$binaries/runtime/nccl-k8s-id" "$binaries/runtime/libnccl_k8s.a" \
    "$(readlink -f "$binaries/runtime/libnccl_k8s.so")"
}

# The images' name prefix: the source inputs and the binaries both (a rebuilt binary is another image).
binaries_hash() {
  { echo "$1"; binary_files | xargs sha256sum | awk '{print $1}'; } | sha256sum | cut -c1-12
}

# What the Dockerfile's `build` stage leaves for the later stages (/out/<image>, the wheels in
# /opt/deps/python), made the same way from the build directory: deploy/docker/stage-rootfs.sh,
# `cmake --install --strip` of the runtime, deploy/docker/sbom.py. The runtime's RUNPATH names
# the build's wheels prefix; it is rewritten to /opt/deps, where the trainer image keeps them.
stage_binaries() {  # stage_binaries <context dir>
  local ctx=$1 deps version f old new
  deps=$(sed -n 's/^NCCLOP_DEPS_PREFIX:[A-Z]*=//p' "$binaries/CMakeCache.txt")
  [ -d "$deps/python/nvidia" ] || die "--binaries: no NVIDIA wheels in ${deps:-?}/python (the build's NCCLOP_DEPS_PREFIX)"
  version=$(tr -d '[:space:]' < "$root/VERSION")
  rm -rf "$ctx"; mkdir -p "$ctx/out" "$ctx/opt/deps/python"
  (
    cd "$root"
    deploy/docker/stage-rootfs.sh "$ctx/out/operator" "$binaries/operator/nccl-operator"
    deploy/docker/stage-rootfs.sh "$ctx/out/sidecar" "$binaries/sidecar/nccl-sidecar"
    DESTDIR="$ctx/out/trainer" cmake --install "$binaries/runtime" --prefix /usr/local --strip >/dev/null
    python3 deploy/docker/sbom.py --image nccl-operator --root "$ctx/out/operator" --version "$version" --deps "$deps"
    python3 deploy/docker/sbom.py --image nccl-sidecar --root "$ctx/out/sidecar" --version "$version" --deps "$deps"
    python3 deploy/docker/sbom.py --image nccl-trainer --root "$ctx/out/trainer-meta" --version "$version" \
      --wheels "$deps/python" --wheels-at /opt/deps/python
  ) >&2
  # A RelWithDebInfo build's static library carries debug info a Release build has not.
  find "$ctx/out/trainer" -name '*.a' -exec strip --strip-debug {} +
  cp -al "$deps/python/nvidia" "$ctx/opt/deps/python/" 2>/dev/null || cp -a "$deps/python/nvidia" "$ctx/opt/deps/python/"
  echo 'file(RPATH_SET FILE "${F}" NEW_RPATH "${R}")' > "$ctx/rpath.cmake"
  while read -r f; do
    old=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(RUNPATH).*\[\(.*\)\]$/\1/p')
    new=${old//"$deps"//opt/deps}
    [ -n "$old" ] && [ "$new" != "$old" ] || continue
    cmake -DF="$f" -DR="$new" -P "$ctx/rpath.cmake" >/dev/null \
      || log "warning: $f keeps RUNPATH $old (the trainer image's ld.so.conf still finds the wheels' libraries)"
  done < <(find "$ctx/out/trainer" -type f \( -perm -u+x -o -name '*.so*' \))
  rm -f "$ctx/rpath.cmake"
}

build_images() {
  local t target pip_ca=() rev from=()
  rev=$(revision)
  if [ -n "$binaries" ]; then
    log "staging the binaries of $binaries for the build stage (a named context)"
    stage_binaries "$dir/binaries"
    from=(--local binaries="$dir/binaries" --opt context:build=local:binaries)
  fi
  # pip in the build verifies HTTPS with this machine's CA bundle (which may hold a proxy's CA
  # that Debian's bundle in the image lacks); a secret, so it reaches no image.
  [ -s /etc/ssl/certs/ca-certificates.crt ] && pip_ca=(--secret id=pip-ca,src=/etc/ssl/certs/ca-certificates.crt)
  for target in "${targets[@]}"; do
    t=$(date +%s)
    log "building $target (log: $dir/logs/build-$target.log)"
    buildctl build --progress=plain --frontend dockerfile.v0 \
      --local context="$root" --local dockerfile="$root/deploy/docker" --opt filename=Dockerfile \
      --opt target="$target" \
      --opt build-arg:BUILD_IMAGE="$registry/library/debian:$DEBIAN_SUITE" \
      --opt build-arg:TRAINER_BASE_IMAGE="$debian_image" \
      --opt build-arg:REVISION="$rev" \
      "${from[@]}" "${pip_ca[@]}" \
      --output "type=image,name=$reg/nccl-$target:$tag,push=true" \
      >"$dir/logs/build-$target.log" 2>&1 \
      || { tail -40 "$dir/logs/build-$target.log" >&2; die "building $target failed"; }
    log "built $reg/nccl-$target:$tag in $(( $(date +%s) - t ))s"
  done
}

# ref, compressed bytes (what a node pulls), uncompressed bytes (the layers unpacked).
report_sizes() {
  python3 "$here/registry.py" sizes "$registry" "${targets[@]/#/$prefix/nccl-}" --tag "$tag" > "$dir/images.txt"
  awk '{printf "[images] %-50s %6.1f MB compressed, %6.1f MB unpacked\n", $1, $2/1e6, $3/1e6}' \
    "$dir/images.txt" >&2
}

images_built() {
  local target
  for target in "${targets[@]}"; do registry_has "$prefix/nccl-$target" "$tag" || return 1; done
  [ -f "$state/built-$prefix-$tag" ] && registry_has library/debian "$DEBIAN_SUITE-slim"
}

up() {
  down
  mkdir -p "$state" "$dir/logs"
  local t0; t0=$(date +%s)
  # buildkitd lives only while building; a failed `up` leaves nothing running.
  trap 'rc=$?; stop_pid_file "$dir/buildkitd.pid"; [ "$rc" -eq 0 ] || down' EXIT
  # Building (tools, base, images) holds the lock; images already built need no lock, so an
  # `up` of unchanged inputs does not wait for another checkout's build.
  if [ ! -x "$bin/registry" ]; then
    exec 9>"$state/.lock"; flock 9
    build_tools
    flock -u 9
  fi
  start_registry
  tag=$(chart_app_version)
  if [ -n "$binaries" ]; then
    [ -f "$binaries/CMakeCache.txt" ] || die "--binaries $binaries: not a CMake build directory"
    binaries=$(cd "$binaries" && pwd)
    log "bringing the image targets of $binaries up to date"
    cmake --build "$binaries" --target nccl-operator nccl-sidecar nccl_k8s nccl_k8s_static nccl-k8s-id \
      nccl-allreduce >"$dir/logs/binaries-build.log" 2>&1 \
      || { tail -30 "$dir/logs/binaries-build.log" >&2; die "building the binaries in $binaries failed"; }
    prefix="host-$(binaries_hash "$(inputs_hash)")"
  else
    prefix="build-$(inputs_hash)"
  fi
  reg="$registry/$prefix"
  debian_image="$registry/library/debian:$DEBIAN_SUITE-slim"
  if images_built; then
    log "images $reg/*:$tag already built (inputs unchanged)"
  else
    exec 9>"$state/.lock"; flock 9
    if images_built; then
      log "images $reg/*:$tag built meanwhile by another run"
    else
      debian_install_missing images runc
      build_tools
      start_buildkitd
      ensure_debian_base
      build_images
      touch "$state/built-$prefix-$tag"
      stop_pid_file "$dir/buildkitd.pid"
    fi
    flock -u 9
  fi
  cat > "$dir/registry.env" <<EOF
REGISTRY=$registry
REG=$reg
IMAGE_TAG=$tag
OPERATOR_IMAGE=$reg/nccl-operator:$tag
SIDECAR_IMAGE=$reg/nccl-sidecar:$tag
TRAINER_IMAGE=$reg/nccl-trainer:$tag
DEBIAN_IMAGE=$debian_image
IMAGES_BIN=$bin
EOF
  report_sizes
  log "up in $(( $(date +%s) - t0 ))s; source $dir/registry.env"
}

case "$cmd" in
  tools) mkdir -p "$state"; exec 9>"$state/.lock"; flock 9; build_tools; echo "$bin" ;;
  up) up ;;
  down) down ;;
esac
