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
# TORCH_VERSION and TORCH_PINS (torch and every dependency, as resolved): the cache key.
# shellcheck source=../tests/harness/versions.env
source "$(dirname "$0")/../tests/harness/versions.env"
readonly PINS=$TORCH_PINS
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
