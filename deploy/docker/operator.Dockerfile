# syntax=docker/dockerfile:1
# The operator image. Build from the repository root:
#   docker build -f deploy/docker/operator.Dockerfile -t nccl-operator:0.1.0 .
# Stage 1 builds with the Debian packages scripts/setup.sh installs; stage 2 holds the binary and
# the shared libraries it links (libcurl, OpenSSL), runs as an unprivileged user and never needs
# a shell or a writable root filesystem.

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
 && cmake --build build --target nccl-operator \
 && strip build/operator/nccl-operator

FROM debian:bookworm-slim
# ca-certificates: for a --kubeconfig that points at a cluster with a publicly signed endpoint.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 libssl3 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/operator/nccl-operator /usr/local/bin/nccl-operator
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/nccl-operator"]
