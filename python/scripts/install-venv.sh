#!/usr/bin/env bash
# Installs this package (python/) into a virtual environment inside the build dir, never into
# the system: Debian's python3 with its site packages visible (pytest from python3-pytest), the
# package built from the working tree with Debian's setuptools, nothing fetched.
#
#   python/scripts/install-venv.sh BUILD_DIR     -> BUILD_DIR/python-venv/bin/python
set -euo pipefail
build=${1:?usage: install-venv.sh BUILD_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$build/python-venv"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
# A copy, so the build's egg-info and build/ stay out of the source tree.
stage=$(mktemp -d "$build/python-src.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp -r "$here/pyproject.toml" "$here/README.md" "$here/src" "$stage/"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-build-isolation \
  --no-deps --force-reinstall "$stage" >/dev/null
"$venv/bin/python" -c 'import nccl_k8s; print("nccl_k8s", nccl_k8s.__version__, "in", nccl_k8s.__file__)'
