# Sourced by the scripts that build a program from a public Go module at a pinned version
# (tests/harness/kueue/build.sh, bench/scale/build.sh), through a throw-away wrapper module, with
# the machine's Go (GOTOOLCHAIN=local), static (CGO_ENABLED=0) and with -trimpath. Nothing of the
# module is copied into this repository; what is built is cached per version by the caller.
#
#   go_module_cache                  the cache dir, $NCCLOP_CACHE or ~/.cache/nccl-operator
#   go_module_fetch <name> <module> <version> <package>
#                                    the wrapper module $go_module_cache/src/<name>-<version>
#                                    (which imports <package>) resolved; cd's into it and sets
#                                    go_module_src, the module's own source directory
#   go_module_build <package> <binary> [ldflags]
#                                    builds <package> (stripped, with the ldflags) to <binary>,
#                                    through <binary>.tmp.<pid>: an interrupted build leaves no binary
# Both need `go_module_who` (a name for messages) set by the caller.

go_module_cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}

go_module_fetch() {
  local name=$1 module=$2 version=$3 package=$4
  export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
  mkdir -p "$go_module_cache/src/$name-$version"
  # One caller at a time in the wrapper module (setup, a test, a bench may build the same version).
  exec 8>"$go_module_cache/src/$name-$version.lock"
  flock 8
  cd "$go_module_cache/src/$name-$version"
  printf 'module local/%sbuild\n\ngo 1.25.0\n\nrequire %s %s\n' "$name" "$module" "$version" > go.mod
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" > tools.go
  echo "[$go_module_who] resolving $module $version" >&2
  go get "$module@$version" >/dev/null 2>&1
  go mod tidy >/dev/null 2>&1 || go mod tidy
  go_module_src=$(go list -m -f '{{.Dir}}' "$module")
}

go_module_build() {
  local package=$1 binary=$2 ldflags=${3:-} start
  start=$(date +%s)
  echo "[$go_module_who] building $package" >&2
  go build -ldflags "-s -w $ldflags" -o "$binary.tmp.$$" "$package"
  chmod -R u+w "$(dirname "$binary")"
  mv "$binary.tmp.$$" "$binary"
  echo "[$go_module_who] built in $(( $(date +%s) - start ))s" >&2
}
