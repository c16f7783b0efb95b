#!/usr/bin/env bash
# Installs NCCL and the CUDA runtime (headers + shared libraries) from NVIDIA's wheels into the
# project-local prefix .deps/python, where runtime/CMakeLists.txt looks for them. Idempotent:
# when the pinned versions are already there it returns at once.
#
#   scripts/install-nvidia-wheels.sh            # into <repo>/.deps
#   NCCLOP_DEPS_PREFIX=/opt/deps scripts/install-nvidia-wheels.sh
set -euo pipefail

readonly NCCL_VERSION="2.28.9"        # nvidia-nccl-cu13
readonly CUDART_VERSION="13.0.96"     # nvidia-cuda-runtime (CUDA 13.0, the driver 580 series' own)
readonly CRT_VERSION="13.0.88"        # nvidia-cuda-crt: crt/host_defines.h, which cuda_runtime_api.h includes
readonly CCCL_VERSION="13.0.85"       # nvidia-cuda-cccl: <nv/target>, which cuda_fp16.h (included by nccl.h) needs

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${NCCLOP_DEPS_PREFIX:-${repo_root}/.deps}"
target="${prefix}/python"
stamp="${target}/.ncclop-wheels"
want="nvidia-nccl-cu13==${NCCL_VERSION} nvidia-cuda-runtime==${CUDART_VERSION} nvidia-cuda-crt==${CRT_VERSION} nvidia-cuda-cccl==${CCCL_VERSION}"

if [[ -f "${stamp}" && "$(cat "${stamp}")" == "${want}" \
      && -f "${target}/nvidia/nccl/include/nccl.h" ]]; then
  echo "install-nvidia-wheels: ${want} already in ${target}"
  exit 0
fi

python="${PYTHON:-python3}"
if ! "${python}" -m pip --version >/dev/null 2>&1; then
  echo "install-nvidia-wheels: '${python} -m pip' does not work; install pip (apt-get install python3-pip) or set PYTHON" >&2
  exit 1
fi

rm -rf "${target}"
mkdir -p "${target}"
# --no-deps: these four wheels carry everything the runtime needs (headers and .so files).
# shellcheck disable=SC2086
"${python}" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
  --target "${target}" ${want}

# The cudart wheel layout changed over releases (nvidia/cuda_runtime/ vs nvidia/cu13/); CMake
# searches both, but say which one we got so a build failure is easy to read.
for header in nccl.h cuda_runtime_api.h host_defines.h; do
  if ! find "${target}/nvidia" -name "${header}" -print -quit | grep -q .; then
    echo "install-nvidia-wheels: ${header} not found under ${target}/nvidia: wheel layout changed?" >&2
    exit 1
  fi
done
echo "${want}" >"${stamp}"
echo "install-nvidia-wheels: installed ${want} into ${target}"
