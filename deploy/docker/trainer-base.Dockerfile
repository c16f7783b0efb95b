# syntax=docker/dockerfile:1
# A base for trainer images: the runtime library (libnccl_k8s, headers, CMake package and
# pkg-config file), the tools nccl-allreduce and nccl-k8s-id, and NCCL + the CUDA runtime from
# NVIDIA's wheels. The CUDA driver comes from the node (NVIDIA container toolkit). Build from
# the repository root:
#   docker build -f deploy/docker/trainer-base.Dockerfile -t nccl-trainer:0.1.0 .
# Use it as is (deploy/examples/ run nccl-allreduce from it) or as the FROM of your trainer.

FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config \
      python3 python3-pip \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The wheels go into a private --target prefix, never into the system Python; bookworm's pip
# refuses any install without this switch (PEP 668).
ENV PIP_BREAK_SYSTEM_PACKAGES=1
RUN NCCLOP_DEPS_PREFIX=/opt/deps scripts/install-nvidia-wheels.sh
RUN cmake -S runtime -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNCCLOP_BUILD_TESTS=OFF \
      -DNCCLOP_DEPS_PREFIX=/opt/deps -DCMAKE_INSTALL_PREFIX=/usr/local \
 && cmake --build build \
 && cmake --install build --strip

FROM debian:bookworm-slim
# The same path as in the build stage, so the RUNPATH the tools were linked with stays valid.
COPY --from=build /opt/deps/python/nvidia /opt/deps/python/nvidia
COPY --from=build /usr/local /usr/local
RUN find /opt/deps/python/nvidia -name 'lib*.so*' -printf '%h\n' | sort -u > /etc/ld.so.conf.d/nccl-k8s.conf \
 && ldconfig
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 65532:65532
WORKDIR /tmp
CMD ["nccl-allreduce", "--help"]
