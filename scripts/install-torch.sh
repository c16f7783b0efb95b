#!/usr/bin/env bash
# Installs PyTorch (pinned, with every dependency pinned) for the end-to-end tests whose trainers
# are real PyTorch programs (tests/e2e/flow, scenarios torch*), into the shared cache
# $NCCLOP_CACHE/torch/<version>-<python> (default ~/.cache/nccl-operator), never into the system.
# Prints that directory (put it on PYTHONPATH). A second run returns at once.
#
# The registry serves Linux x86_64 torch only as its CUDA build (torch + NVIDIA's CUDA wheels,
# ~2.6 GB to download, ~4.5 GB installed); it runs on a machine without a GPU, and the tests use
# the gloo backend on the CPU. PyTorch's CPU-only build is not on the registry.
#
#   scripts/install-torch.sh            # prints the directory
set -euo pipefail
readonly TORCH_VERSION=2.11.0
# What torch 2.11.0 resolved to on 2026-12-01, pinned so the cache key says everything; torch
# pins its NVIDIA wheels itself. numpy only silences torch's warning at import.
readonly PINS="torch==$TORCH_VERSION numpy==2.3.5 sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1 jinja2==3.1.6
markupsafe==3.0.4 filelock==4.3.1 fsspec==2026.9.0 typing-extensions==4.16.0 setuptools==81.0.0
cuda-toolkit==13.0.2 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
pyver=$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
cache=${NCCLOP_CACHE:-$HOME/.cache/nccl-operator}
target="$cache/torch/$TORCH_VERSION-$pyver"
stamp="$target/.ncclop-pins"
log() { echo "[install-torch] $*" >&2; }

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PINS" ]; then echo "$target"; exit 0; fi
mkdir -p "$cache/torch"
exec 9>"$cache/torch/.lock"
flock 9   # several build dirs may ask at once: one installs, the others wait and reuse it
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PINS" ]; then echo "$target"; exit 0; fi

t0=$(date +%s)
log "installing torch $TORCH_VERSION and its pinned dependencies into $target (about 2.6 GB to download)"
tmp="$target.partial"
rm -rf "$tmp" "$target"
# shellcheck disable=SC2086
"$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-cache-dir --only-binary :all: --no-compile \
  --target "$tmp" $PINS
PYTHONPATH="$tmp" "$python" -c 'import torch.distributed as d; assert d.is_gloo_available()'
echo "$PINS" >"$tmp/.ncclop-pins"
mv "$tmp" "$target"
log "done in $(( $(date +%s) - t0 ))s ($(du -sh "$target" | cut -f1))"
echo "$target"
