# Shared by the real-node tier (tests/e2e/realnode) and scripts/demo.sh --real-node: images for
# the real node, the operator installed by Helm, and waits. Source it after realnode.sh up and
# `source D/env`; set build (the build dir) first.
rn_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# Stand-in images of this build's binaries (operator, sidecar, trainer: nccl-allreduce with its
# NCCL and CUDA runtime libraries, plus sh and getent for the tests' commands), imported into the
# node's containerd as localhost/nccl-*:dev. They carry the same users and entry points as
# deploy/docker/*.Dockerfile; images built from those Dockerfiles replace them once a registry
# with them is at hand. Sets operator_image, sidecar_image, trainer_image.
rn_stand_in_images() {
  local out="$REALNODE_DIR/images" img="$rn_root/tests/realnode/oci_image.py"
  mkdir -p "$out"
  operator_image=localhost/nccl-operator:dev
  sidecar_image=localhost/nccl-sidecar:dev
  trainer_image=localhost/nccl-trainer:dev
  "$img" --name "$operator_image" --out "$out/operator.tar" --user 65532:65532 --with-libs \
    --entrypoint /usr/local/bin/nccl-operator "$build/operator/nccl-operator=/usr/local/bin/nccl-operator"
  "$img" --name "$sidecar_image" --out "$out/sidecar.tar" --user 65532:65532 --with-libs \
    --entrypoint /usr/local/bin/nccl-sidecar "$build/sidecar/nccl-sidecar=/usr/local/bin/nccl-sidecar"
  "$img" --name "$trainer_image" --out "$out/trainer.tar" --user 65532:65532 --with-libs --workdir /tmp \
    "$build/runtime/nccl-allreduce=/usr/local/bin/nccl-allreduce" \
    "$(command -v sh)=/bin/sh" "$(command -v getent)=/usr/bin/getent" "$(command -v sleep)=/bin/sleep"
  local t
  for t in operator sidecar trainer; do $REALNODE_CTR images import "$out/$t.tar" >/dev/null; done
}

# The images for the node: those built from deploy/docker by tests/images/build.sh and served
# by its loopback registry with REALNODE_STAND_IN_IMAGES=0 (not yet run in the tier), else the
# stand-ins above (the default). Call before realnode.sh up with `rn_registry_up D` (it exports
# REALNODE_REGISTRY for the node), then `rn_images` after it. Sets *_image.
rn_registry_up() {  # rn_registry_up <dir>
  rn_images_dir=""
  [ "${REALNODE_STAND_IN_IMAGES:-1}" = 0 ] && [ -x "$rn_root/tests/images/build.sh" ] || return 0
  rn_images_dir=$1
  "$rn_root/tests/images/build.sh" up --dir "$rn_images_dir" >&2
  # shellcheck source=/dev/null
  source "$rn_images_dir/registry.env"
  export REALNODE_REGISTRY=$REGISTRY
}
# rn_pull_policy: Always from the registry; IfNotPresent for stand-ins, which exist only on the node.
rn_images() {
  if [ -n "${rn_images_dir:-}" ]; then
    operator_image=$OPERATOR_IMAGE sidecar_image=$SIDECAR_IMAGE trainer_image=$TRAINER_IMAGE
    rn_pull_policy=Always
  else
    rn_stand_in_images
    rn_pull_policy=IfNotPresent
  fi
}
rn_registry_down() { [ -z "${rn_images_dir:-}" ] || "$rn_root/tests/images/build.sh" down --dir "$rn_images_dir" >&2 || true; }

# helm install of the chart with the given images; waits for the operator to be Available.
rn_helm_install() {  # rn_helm_install <release> <namespace> [helm args...]
  local rel=$1 ns=$2; shift 2
  helm install "$rel" "$rn_root/charts/nccl-operator" -n "$ns" --create-namespace \
    --set image.repository="${operator_image%:*}" --set image.tag="${operator_image##*:}" \
    --set sidecarImage.repository="${sidecar_image%:*}" --set sidecarImage.tag="${sidecar_image##*:}" \
    --set image.pullPolicy="$rn_pull_policy" --set sidecarImage.pullPolicy="$rn_pull_policy" \
    "$@" >/dev/null
  kubectl -n "$ns" wait deployment --all --for=condition=Available --timeout=120s >/dev/null
}

# The example job with the trainer image replaced and, on a 2-core node, a smaller CPU request
# (4 pods x 500m would not fit next to the operator and the sidecars).
rn_example_job() {  # rn_example_job <cpu request>
  sed -e "s#image: nccl-trainer:0.1.0#image: $trainer_image#" -e "s#cpu: 500m#cpu: $1#" \
    "$rn_root/deploy/examples/ncclJob.yaml"
}

# Waits until a jsonpath of an object has a value; prints what it saw last on failure.
rn_wait() {  # rn_wait <seconds> <namespace> <object> <jsonpath> <value>
  local secs=$1 ns=$2 obj=$3 path=$4 want=$5 got=""
  local deadline=$(( $(date +%s) + secs ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    got=$(kubectl -n "$ns" get "$obj" -o jsonpath="$path" 2>/dev/null || true)
    [ "$got" = "$want" ] && return 0
    sleep 0.2
  done
  echo "waited ${secs}s for $obj $path = $want; last: $got" >&2
  return 1
}
