#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and helm from their Go
# modules at the versions pinned in tests/harness/versions.env. Output is cached per version under
# $NCCLOP_CACHE (default ~/.cache/nccl-operator); a second run returns at once.
# --node also builds kubelet and kube-proxy from the same k8s.io/kubernetes module, and its e2e
# DRA test driver (test/e2e/dra/test-driver, as dra-test-driver: the real node's device driver)
# (tests/harness/realnode). Prints the bin directory on its last line.
# --graph only resolves the wrapper module of k8s.io/kubernetes and prints its directory: other
# programs (etcd, helm, KWOK) are resolved beside its build list, so that the packages they share
# with Kubernetes (client-go, apimachinery, grpc, ...) compile once (scripts/lib/go-module.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=/dev/null
source "$here/../versions.env"
# shellcheck source=../../../scripts/lib/go-module.sh
source "$here/../../../scripts/lib/go-module.sh"
go_module_who=controlplane-build
cache=$go_module_cache
kube_mod="$cache/src/kube-$KUBE_VERSION"
bin="$cache/bin/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION"
kube_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
log() { echo "[controlplane-build] $*" >&2; }
mode=${1:-}
case "$mode" in
  ""|--graph) ;;
  --node) kube_cmds+=(kubelet kube-proxy dra-test-driver) ;;
  -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
  *) echo "controlplane/build.sh: unknown argument $mode (see --help)" >&2; exit 2 ;;
esac
want=("${kube_cmds[@]}" etcd helm)

# The programs of k8s.io/kubernetes the harness builds (with --node); their wrapper module imports
# them all, so that one resolution serves every build.
kube_tools_go='//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver"
)'

# The wrapper module of k8s.io/kubernetes, resolved once for a version, these imports and this Go
# (the key in the file `resolved`); its own lock, so a --graph caller need not wait for a build.
resolve_kube() {
  mkdir -p "$kube_mod"
  (
    exec 7>"$kube_mod.lock"
    flock 7
    cd "$kube_mod"
    go_module_env
    local key
    key=$(printf '%s\n%s\n%s\n' "$KUBE_VERSION" "$kube_tools_go" "$(go env GOVERSION)" | sha256sum | cut -c1-16)
    [ -f resolved ] && [ "$(cat resolved)" = "$key" ] && exit 0
    rm -f resolved
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
    printf '%s\n' "$kube_tools_go" > tools.go
    log "resolving k8s.io/kubernetes $KUBE_VERSION modules"
    go mod tidy -e >/dev/null 2>&1 || true
    go get "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
    go mod tidy >/dev/null
    echo "$key" > resolved
  )
}
if [ "$mode" = --graph ]; then resolve_kube; echo "$kube_mod"; exit 0; fi

have_all() { for b in "${want[@]}"; do [ -x "$bin/$b" ] || return 1; done; }
if have_all; then echo "$bin"; exit 0; fi

mkdir -p "$bin" "$cache/src"
# One build of a version at a time (setup's lanes, tests run in parallel): a second caller waits
# for the first and then finds the binaries made.
exec 9>"$bin.lock"
flock 9
if have_all; then echo "$bin"; exit 0; fi
go_module_env
ldflags="-s -w"
# The package of each program: cmd/<name>, but for the DRA test driver of Kubernetes' e2e tests.
kube_package() {
  case "$1" in
    dra-test-driver) echo k8s.io/kubernetes/test/e2e/dra/test-driver ;;
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

build_kube() {
  resolve_kube
  (
    cd "$kube_mod"
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

# etcd beside Kubernetes' modules when Kubernetes' etcd client is of the same release (both then
# share grpc, protobuf and etcd's API packages); else on its own.
build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  local client
  client=$(cd "$kube_mod" && go list -m -f '{{.Version}}' go.etcd.io/etcd/client/v3 2>/dev/null) || client=""
  if [ "$client" = "$ETCD_VERSION" ]; then
    go_module_build_beside "$kube_mod" etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3 "$bin/etcd"
  else
    go_module_fetch etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION" go.etcd.io/etcd/server/v3
    go_module_build go.etcd.io/etcd/server/v3 "$bin/etcd"
  fi
}

build_helm() {
  [ -x "$bin/helm" ] && return 0
  go_module_build_beside "$kube_mod" helm helm.sh/helm/v3 "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$bin/helm"
}

start=$(date +%s)
build_kube
(build_etcd)
(build_helm)
have_all || { log "missing binaries in $bin"; exit 1; }
log "built in $(( $(date +%s) - start ))s"
echo "$bin"
