#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and helm from their Go
# modules at the versions pinned in tests/harness/versions.env. Output is cached per version under
# $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run returns at once.
# --node also builds kubelet and kube-proxy from the same k8s.io/kubernetes module, and its e2e
# DRA test driver (test/e2e/dra/test-driver, as dra-test-driver: the real node's device driver)
# (tests/harness/realnode). Prints the bin directory on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
bin="$cache/bin/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION"
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if [ "${1:-}" = --node ]; then kube_cmds+=(kubelet kube-proxy dra-test-driver); fi
want=("${kube_cmds[@]}" etcd helm)

have_all() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
if have_all; then echo "$bin"; exit 0; fi

mkdir -p "$bin" "$cache/src"
# One build of a version at a time (setup's lanes, tests run in parallel): a second caller waits
# for the first and then finds the binaries made.
exec 9>"$bin.lock"
flock 9
if have_all; then echo "$bin"; exit 0; fi
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
ldflags="-s -w"
log() { echo "[controlplane-build] $*" >&2; }
# The package of each program: cmd/<name>, but for the DRA test driver of Kubernetes' e2e tests.
kube_package() {
  case "$1" in
    dra-test-driver) echo k8s.io/kubernetes/test/e2e/dra/test-driver ;;
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

build_kube() {
  local mod="$cache/src/kube-$KUBE_VERSION"
  mkdir -p "$mod"
  (
    cd "$mod"
    go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
    local gomod
    gomod=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod
    local staging="v0.${KUBE_VERSION#v1.}"
    {
      echo "module local/kubebuild"
      echo
      echo "go 1.25.0"
      echo
      echo "require k8s.io/kubernetes $KUBE_VERSION"
      echo
      # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
      # local paths; a consumer must replace each with the published v0.X.Y instead.
      grep -E '^\s+k8s.io/\S+ v0.0.0$' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
    } > go.mod
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver"
)
GO
    log "resolving k8s.io/kubernetes $KUBE_VERSION modules"
    go mod tidy -e >/dev/null 2>&1 || true
    go get "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
    go mod tidy >/dev/null
    # One `go build` of every missing program: their packages compile once and the programs link
    # side by side (a link is mostly one core's work) into a fresh folder, renamed into place.
    local todo=() packages=() c
    for c in "${kube_cmds[@]}"; do
      [ -x "$bin/$c" ] || { todo+=("$c"); packages+=("$(kube_package "$c")"); }
    done
    [ "${#todo[@]}" -gt 0 ] || return 0
    log "building ${todo[*]}"
    local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
    local vflags="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
    local out; out=$(mktemp -d "$bin.out.XXXXXX")
    go build -tags tools -ldflags "$ldflags $vflags" -o "$out/" "${packages[@]}"
    for c in "${todo[@]}"; do mv "$out/$(basename "$(kube_package "$c")")" "$bin/$c"; done
    rm -rf "$out"
  )
}

build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  local mod="$cache/src/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  (
    cd "$mod"
    printf 'module local/etcdbuild\n\ngo 1.23\n' > go.mod
    cat > main.go <<'GO'
// A minimal main for etcd: the server's own entry point.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
    go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
    go mod tidy >/dev/null
    log "building etcd"
    go build -ldflags "$ldflags" -o "$bin/etcd.tmp" .
    mv "$bin/etcd.tmp" "$bin/etcd"
  )
}

build_helm() {
  [ -x "$bin/helm" ] && return 0
  local mod="$cache/src/helm-$HELM_VERSION"
  mkdir -p "$mod"
  (
    cd "$mod"
    printf 'module local/helmbuild\n\ngo 1.24\n' > go.mod
    cat > tools.go <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
    go get "helm.sh/helm/v3@$HELM_VERSION" >/dev/null 2>&1
    go mod tidy >/dev/null
    log "building helm"
    go build -tags tools -ldflags "$ldflags" -o "$bin/helm.tmp" helm.sh/helm/v3/cmd/helm
    mv "$bin/helm.tmp" "$bin/helm"
  )
}

start=$(date +%s)
build_etcd
build_kube
build_helm
have_all || { log "missing binaries in $bin"; exit 1; }
log "built in $(( $(date +%s) - start ))s"
echo "$bin"
