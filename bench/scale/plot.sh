#!/usr/bin/env bash
# Draws scale.png from run.sh's results.jsonl with matplotlib $MATPLOTLIB_VERSION (default: the
# pin in tests/harness/versions.env) installed from the Python package index into a venv cached
# per version under $NCCLOP_CACHE (default ~/.cache/nccl-operator).
# Usage: plot.sh RESULTS.jsonl OUT.png
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 2 ] || { echo "usage: $0 RESULTS.jsonl OUT.png" >&2; exit 2; }
requested=${MATPLOTLIB_VERSION:-}
# shellcheck source=../../tests/harness/versions.env
source "$here/../../tests/harness/versions.env"
version=${requested:-$MATPLOTLIB_VERSION}
venv=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}/venv/matplotlib-$version
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "matplotlib==$version"
fi
MPLBACKEND=Agg "$venv/bin/python" "$here/plot.py" "$1" "$2"
