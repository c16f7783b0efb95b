# syntax=docker/dockerfile:1
# The sidecar image the operator injects into every NcclJob pod. Build from the repository root:
#   docker build -f deploy/docker/sidecar.Dockerfile -t nccl-sidecar:0.1.0 .
# Same two stages as the operator: Debian's build packages, then only the runtime libraries.

FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake ninja-build pkg-config \
      libcurl4-openssl-dev libssl-dev libboost1.74-dev libcpp-httplib-dev nlohmann-json3-dev \
      libgtest-dev libgmock-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DNCCLOP_BUILD_TESTS=OFF -DNCCLOP_BUILD_RUNTIME=OFF \
 && cmake --build build --target nccl-sidecar \
 && strip build/sidecar/nccl-sidecar

FROM debian:bookworm-slim
# libcpp-httplib0.11: Debian builds cpp-httplib as a shared library, the sidecar's HTTP server.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 libssl3 libcpp-httplib0.11 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/sidecar/nccl-sidecar /usr/local/bin/nccl-sidecar
USER 65532:65532
# 8471: the trainer's id API (127.0.0.1 only); 8472: /healthz and /readyz.
EXPOSE 8472
ENTRYPOINT ["/usr/local/bin/nccl-sidecar"]
