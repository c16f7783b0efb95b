# Sourced by every script that builds a program from a public Go module at a pinned version
# (the control plane, the nodes, Kueue, KWOK, the image tools, JobSet), through a throw-away
# wrapper module. Nothing of a module is copied into this repository; what is built is cached
# per version by the caller.
#
#   go_module_env                    exports the flags of every Go build here: the machine's Go
#                                    (GOTOOLCHAIN=local), static (CGO_ENABLED=0, which a cgo build
#                                    overrides on its command), -trimpath, and no DWARF from the
#                                    compiler (every binary is linked stripped, -s -w, so it would
#                                    be thrown away: not making it saves about a tenth of a build)
#   go_module_cache                  the cache dir, $NCCLOP_CACHE or ~/.cache/nccl-operator
#   go_module_fetch <name> <module> <version> <package> [<graph dir>]
#                                    the wrapper module $go_module_cache/src/<name>-<version>
#                                    (which imports <package>) resolved; cd's into it and sets
#                                    go_module_src, the module's own source directory. With a
#                                    graph dir (a resolved wrapper module, e.g. the control
#                                    plane's), resolved together with that graph's build list
#                                    (go_module_graph_requires): the packages both use at the
#                                    same versions then compile once for both. Non-zero on failure.
#   go_module_build <package> <binary> [ldflags]
#                                    builds <package> (stripped, with the ldflags) to <binary>,
#                                    through <binary>.tmp.<pid>: an interrupted build leaves no binary
#   go_module_build_beside <graph dir> <name> <module> <version> <package> <binary> [ldflags]
#                                    fetch and build within the graph; if the module does not
#                                    build with those versions, says so and builds it on its own;
#                                    go_module_src is set as by go_module_fetch
# All but go_module_env need `go_module_who` (a name for messages) set by the caller.

go_module_cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}

go_module_env() {
  export GOFLAGS="-trimpath -gcflags=all=-dwarf=false" GOTOOLCHAIN=local CGO_ENABLED=0
}

# go_module_graph_requires <graph dir> <module>: a require line for every module in the graph's build
# list at the version the graph selected, but <module> and the graph's own direct requirements
# (the programs it builds, which may require their parts at versions only their own replace
# directives make real). Minimal version selection then picks, for each module, the newer of the
# graph's version and the one <module> requires: nothing is moved below what either needs, and
# whatever <module> does not need newer stays as the graph has it.
go_module_graph_requires() {
  local roots
  roots=$(cd "$1" && go mod edit -json | python3 -c 'import json, sys; print(" ".join(r["Path"] for r in json.load(sys.stdin).get("Require") or [] if not r.get("Indirect")))') || return
  (cd "$1" && go list -m -f '{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}' all) |
    awk -v skip="$2 $roots" 'BEGIN { n = split(skip, s, " "); for (i = 1; i <= n; i++) drop[s[i]] = 1 }
                             NF == 2 && !($1 in drop) { print "require " $1 " " $2 }'
}

go_module_fetch() {
  local name=$1 module=$2 version=$3 package=$4 graph=${5:-} dir
  go_module_env
  dir="$go_module_cache/src/$name-$version"
  [ -z "$graph" ] || dir="$dir-beside-$(basename "$graph")"
  mkdir -p "$dir" || return
  # One caller at a time in the wrapper module (setup, a test, a bench may build the same version).
  exec 8>"$dir.lock" && flock 8 && cd "$dir" || return
  {
    printf 'module local/%sbuild\n\ngo 1.25.0\n\nrequire %s %s\n\n' "$name" "$module" "$version"
    [ -z "$graph" ] || go_module_graph_requires "$graph" "$module"
  } > go.mod || return
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" > tools.go || return
  echo "[$go_module_who] resolving $module $version${graph:+ beside $(basename "$graph")}" >&2
  go get "$module@$version" >/dev/null 2>&1 || go get "$module@$version" || return
  go mod tidy >/dev/null 2>&1 || go mod tidy || return
  # A graph that requires a newer release of the module itself would build that one: refuse.
  local got
  got=$(go list -m -f '{{.Version}}' "$module") || return
  [ "$got" = "$version" ] || { echo "[$go_module_who] $module resolved to $got, not $version" >&2; return 1; }
  go_module_src=$(go list -m -f '{{.Dir}}' "$module")
}

go_module_build() {
  local package=$1 binary=$2 ldflags=${3:-} start
  start=$(date +%s)
  echo "[$go_module_who] building $package" >&2
  go build -ldflags "-s -w $ldflags" -o "$binary.tmp.$$" "$package" || { rm -f "$binary.tmp.$$"; return 1; }
  chmod -R u+w "$(dirname "$binary")" && mv "$binary.tmp.$$" "$binary" || return
  echo "[$go_module_who] built in $(( $(date +%s) - start ))s" >&2
}

go_module_build_beside() {
  local graph=$1 name=$2 module=$3 version=$4 package=$5 binary=$6 ldflags=${7:-}
  if go_module_fetch "$name" "$module" "$version" "$package" "$graph" &&
     go_module_build "$package" "$binary" "$ldflags"; then
    return 0
  fi
  echo "[$go_module_who] $module $version does not build with the modules of $(basename "$graph"); building it with its own" >&2
  go_module_fetch "$name" "$module" "$version" "$package" && go_module_build "$package" "$binary" "$ldflags"
}
