# Shared by the real-node tier (tests/e2e/realnode) and scripts/demo.sh --real-node: the images
# for the real node, the operator installed by Helm, the example job, waits. Source it, call
# rn_images_up before realnode.sh up, the rest after `source D/env`.
rn_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# The images: those tests/harness/images/build.sh builds from deploy/docker/Dockerfile and serves on
# a loopback registry. The CTest fixture "images" (images.up) has built them and left the
# registry running when NCCLOP_IMAGES_DIR/registry.env exists: used as it is. Otherwise
# `build.sh up --dir <dir>` here (cached: seconds when the inputs are unchanged, the image
# build's C++ compile when they changed), and rn_images_down stops that registry. Call before
# realnode.sh up: exports REALNODE_REGISTRY (containerd's hosts.toml for it) and sets REG,
# OPERATOR_IMAGE, SIDECAR_IMAGE, TRAINER_IMAGE (build.sh --help: the contract).
rn_images_up() {  # rn_images_up <dir used when there is no fixture>
  local d=${NCCLOP_IMAGES_DIR:-}
  rn_own_images_dir=""
  if [ -z "$d" ] || [ ! -f "$d/registry.env" ]; then
    d=$1 rn_own_images_dir=$1
    "$rn_root/tests/harness/images/build.sh" up --dir "$d" >&2
  fi
  # shellcheck source=/dev/null
  source "$d/registry.env"
  curl -sf -o /dev/null "http://$REGISTRY/v2/" \
    || { echo "no registry answers at $REGISTRY ($d/registry.env): tests/harness/images/build.sh up --dir $d" >&2; return 1; }
  export REALNODE_REGISTRY=$REGISTRY
}
rn_images_down() { [ -z "${rn_own_images_dir:-}" ] || "$rn_root/tests/harness/images/build.sh" down --dir "$rn_own_images_dir" >&2 || true; }

# realnode.sh up --dir <dir>, under a lock for this machine: one real node per machine (its
# interfaces and iptables chains are fixed), so a second run (another checkout's tests) waits
# for the first to end (up to 20 min). The lock is this shell's: the node's programs do not
# inherit it, so it ends with the run even if something of the node is left behind.
rn_node_up() {  # rn_node_up <dir>
  local lock=/run/lock/nccl-operator-realnode.lock
  exec {rn_lock_fd}>>"$lock"
  if ! flock -n "$rn_lock_fd"; then
    echo "waiting for another real node on this machine to stop (lock $lock)" >&2
    flock -w 1200 "$rn_lock_fd" || { echo "another real node still runs after 20 min (lock $lock)" >&2; return 1; }
  fi
  "$rn_root/tests/harness/realnode/realnode.sh" up --dir "$1" {rn_lock_fd}>&-
}

# The README's "Install on a real cluster", as written there (REG from registry.env; the chart's
# defaults otherwise: tag = appVersion, the operator's pullPolicy Always, the sidecar's
# IfNotPresent); waits for the operator's rollout.
rn_helm_install() {
  (cd "$rn_root" && helm install nccl-operator charts/nccl-operator -n nccl-system --create-namespace \
    --set image.repository="$REG/nccl-operator" --set sidecarImage.repository="$REG/nccl-sidecar") >/dev/null
  kubectl -n nccl-system rollout status deployment/nccl-operator --timeout=120s >/dev/null
}

# The example job with the README's image substitution (the registry is the only change).
rn_example_job() {
  sed "s#image: nccl-trainer:#image: $REG/nccl-trainer:#" "$rn_root/deploy/examples/ncclJob.yaml"
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

# Seconds from <start> (date +%s.%N) until every pod of a job has its trainer container started
# (running, or already terminated); polls the API (about 0.2 s resolution).
rn_seconds_to_trainers() {  # rn_seconds_to_trainers <namespace> <job> <pods> <start> <timeout s>
  local ns=$1 job=$2 want=$3 start=$4 deadline=$(( $(date +%s) + $5 )) started
  while [ "$(date +%s)" -lt "$deadline" ]; do
    started=$(kubectl -n "$ns" get pods -l "nccl.dev/job-name=$job" -o jsonpath='{range .items[*]}{.status.containerStatuses[?(@.name=="trainer")].state.running.startedAt}{.status.containerStatuses[?(@.name=="trainer")].state.terminated.startedAt}{"\n"}{end}' 2>/dev/null | grep -c . || true)
    if [ "${started:-0}" -ge "$want" ]; then
      python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$start"
      return 0
    fi
    sleep 0.1
  done
  echo "not all $want trainers of $job started within $5 s" >&2
  return 1
}
