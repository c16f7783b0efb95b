#!/usr/bin/env bash
# Builds the real node's programs from their Go modules at the versions pinned in
# tests/harness/versions.env: containerd, containerd-shim-runc-v2 and ctr, runc (with seccomp:
# needs libseccomp-dev), the CNI plugins bridge, host-local and loopback, and CoreDNS with only
# the plugins the node uses. The kubelet, kube-scheduler, kube-proxy and the DRA test driver
# (dra-test-driver) come from tests/harness/controlplane/build.sh --node (the control plane's
# k8s.io/kubernetes pin). Cached per version under $NCCLOP_CACHE (default
# ~/.cache/nccl-operator); a second run returns at once. Prints two lines: the node's bin
# directory, then the control plane's (which has kubelet, kube-scheduler, kube-proxy,
# dra-test-driver, kubectl).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
cache=$go_module_cache
bin="$cache/bin/node-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-cni-$CNI_PLUGINS_VERSION-coredns-$COREDNS_VERSION"
want=(containerd containerd-shim-runc-v2 ctr runc bridge host-local loopback coredns)
go_module_env
ldflags="-s -w"
log() { echo "[realnode-build] $*" >&2; }

# Runs a command in a throwaway module dir of its own (the command requires the module).
in_wrapper() {  # in_wrapper <dir name> <command...>
  local mod="$cache/src/$1"; shift
  mkdir -p "$mod"
  (
    cd "$mod"
    [ -f go.mod ] || printf 'module local/realnodebuild\n\ngo 1.25.0\n' > go.mod
    "$@"
  )
}

build_containerd() {
  local need=0 c
  for c in containerd containerd-shim-runc-v2 ctr; do [ -x "$bin/$c" ] || need=1; done
  [ $need = 1 ] || return 0
  in_wrapper "containerd-$CONTAINERD_VERSION" sh -ec '
    cat > tools.go <<GO
//go:build tools

package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
GO
    go get "github.com/containerd/containerd/v2@$0" >/dev/null 2>&1
    go mod tidy >/dev/null 2>&1 || go mod tidy
    # One build of the three: their packages compile once and they link side by side.
    echo "[realnode-build] building containerd, containerd-shim-runc-v2, ctr" >&2
    out=$(mktemp -d "$1/containerd.out.XXXXXX")
    trap "rm -rf \"$out\"" EXIT
    CGO_ENABLED=0 go build -tags "tools no_btrfs no_devmapper no_zfs" \
      -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$0" -o "$out/" \
      github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
      github.com/containerd/containerd/v2/cmd/ctr
    for c in containerd containerd-shim-runc-v2 ctr; do mv "$out/$c" "$1/$c"; done' "$CONTAINERD_VERSION" "$bin"
}

build_runc() {
  [ -x "$bin/runc" ] && return 0
  pkg-config --exists libseccomp || { log "runc needs libseccomp's headers: apt-get install libseccomp-dev"; return 1; }
  in_wrapper "runc-$RUNC_VERSION" sh -ec '
    printf "//go:build tools\n\npackage tools\n\nimport _ \"github.com/opencontainers/runc\"\n" > tools.go
    go get "github.com/opencontainers/runc@$0" >/dev/null 2>&1
    go mod tidy >/dev/null 2>&1 || go mod tidy
    echo "[realnode-build] building runc" >&2
    CGO_ENABLED=1 go build -tags "tools seccomp" -ldflags "-s -w -X main.version=${0#v}" \
      -o "$1/runc.tmp" github.com/opencontainers/runc
    mv "$1/runc.tmp" "$1/runc"' "$RUNC_VERSION" "$bin"
}

build_cni() {
  [ -x "$bin/bridge" ] && [ -x "$bin/host-local" ] && [ -x "$bin/loopback" ] && return 0
  in_wrapper "cni-plugins-$CNI_PLUGINS_VERSION" sh -ec '
    printf "//go:build tools\n\npackage tools\n\nimport (\n\t_ \"github.com/containernetworking/plugins/plugins/main/bridge\"\n\t_ \"github.com/containernetworking/plugins/plugins/main/loopback\"\n\t_ \"github.com/containernetworking/plugins/plugins/ipam/host-local\"\n)\n" > tools.go
    go get "github.com/containernetworking/plugins@$0" >/dev/null 2>&1
    go mod tidy >/dev/null 2>&1 || go mod tidy
    echo "[realnode-build] building bridge, loopback, host-local" >&2
    out=$(mktemp -d "$1/cni.out.XXXXXX")
    trap "rm -rf \"$out\"" EXIT
    CGO_ENABLED=0 go build -tags tools -ldflags "-s -w" -o "$out/" \
      github.com/containernetworking/plugins/plugins/main/bridge \
      github.com/containernetworking/plugins/plugins/main/loopback \
      github.com/containernetworking/plugins/plugins/ipam/host-local
    for p in bridge loopback host-local; do mv "$out/$p" "$1/$p"; done' "$CNI_PLUGINS_VERSION" "$bin"
}

# CoreDNS's own main links every plugin (clouds, etcd, ...); ours registers only the ones the
# node's Corefile uses, which cuts the build to a fraction.
build_coredns() {
  [ -x "$bin/coredns" ] && return 0
  in_wrapper "coredns-$COREDNS_VERSION" sh -ec '
    cat > main.go <<GO
// CoreDNS with the plugins tests/harness/realnode/realnode.sh puts in its Corefile.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
GO
    go get "github.com/coredns/coredns@$0" >/dev/null 2>&1
    go mod tidy >/dev/null 2>&1 || go mod tidy
    echo "[realnode-build] building coredns" >&2
    CGO_ENABLED=0 go build -ldflags "-s -w" -o "$1/coredns.tmp" .
    mv "$1/coredns.tmp" "$1/coredns"' "$COREDNS_VERSION" "$bin"
}

have_all() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
start=$(date +%s)
if ! have_all; then
  mkdir -p "$bin" "$cache/src"
  exec 9>"$bin.lock"  # one build of these versions at a time; a second caller waits, then finds them
  flock 9
  build_cni
  build_runc
  build_containerd
  build_coredns
  have_all || { log "missing binaries in $bin"; exit 1; }
  log "built in $(( $(date +%s) - start ))s"
fi
kube_bin=$("$here/../controlplane/build.sh" --node | tail -1)
echo "$bin"
echo "$kube_bin"
