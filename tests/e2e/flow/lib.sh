# Shared by the end-to-end flow tests (tests/e2e/flow) and scripts/demo.sh: a local node
# (tests/harness/node) that runs the operator installed by Helm, the sidecars and the trainers as
# processes in network namespaces. Source it, then set: kubectl, helm, build (the build dir).
flow_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

# Which local directory stands in for which image.
flow_image_map() {
  echo "nccl-operator:*=$build/operator,nccl-sidecar:*=$build/sidecar,nccl-trainer:*=$build/runtime"
}

# flow_start_node <node> <bridge> <pod-cidr> <state-dir> <schedule:true|false> <log>
# Starts testnode in the background (pid in $node_pid) and waits until the Node is Ready.
flow_start_node() {
  local node=$1 bridge=$2 cidr=$3 state=$4 schedule=$5 logf=$6 bin
  bin=$("$flow_root/tests/harness/node/build.sh" | tail -1)
  rm -f "$state/ready"   # one left by an earlier run would end the wait before this node registers
  # shellcheck disable=SC2086 # FLOW_NODE_FLAGS: extra testnode flags, word-split on purpose
  "$bin" --node-name "$node" --schedule="$schedule" --port 0 --state-dir "$state" ${FLOW_NODE_FLAGS:-} \
    --bridge "$bridge" --pod-cidr "$cidr" --cpu 32 --memory 64Gi \
    --ca-cert "$CONTROLPLANE_DIR/pki/ca.crt" --ca-key "$CONTROLPLANE_DIR/pki/ca.key" \
    --image-map "$(flow_image_map)" --kubeconfig "$KUBECONFIG" >"$logf" 2>&1 &
  node_pid=$!
  local deadline=$(( $(date +%s) + 60 ))
  until [ -f "$state/ready" ]; do
    if ! kill -0 "$node_pid" 2>/dev/null; then tail -20 "$logf" >&2; echo "testnode exited" >&2; return 1; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then tail -20 "$logf" >&2; echo "testnode not ready in 60s" >&2; return 1; fi
    sleep 0.1
  done
  "$kubectl" wait --for=condition=Ready "node/$node" --timeout=30s >/dev/null
}

flow_stop_node() {
  if [ -n "${node_pid:-}" ] && kill -0 "$node_pid" 2>/dev/null; then
    kill -TERM "$node_pid"; wait "$node_pid" 2>/dev/null || true
  fi
  node_pid=""
}

# flow_bind_loop <namespace> <node>: the scheduler for one namespace (background; pid in
# $bind_pid). The tests share one control plane with other tests, so their nodes schedule
# nothing by themselves; this binds only this namespace's pending pods that ask for the default
# scheduler (flow.schedule runs a real kube-scheduler of its own for its job).
flow_bind_loop() {
  local ns=$1 node=$2
  (
    while true; do
      for pod in $("$kubectl" -n "$ns" get pods --field-selector spec.nodeName=,spec.schedulerName=default-scheduler \
                     -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' 2>/dev/null); do
        printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"apiVersion":"v1","kind":"Node","name":"%s"}}' \
          "$pod" "$node" | "$kubectl" create --raw "/api/v1/namespaces/$ns/pods/$pod/binding" -f - >/dev/null 2>&1 || true
      done
      sleep 0.2
    done
  ) &
  bind_pid=$!
}

flow_stop_bind_loop() {
  if [ -n "${bind_pid:-}" ]; then kill "$bind_pid" 2>/dev/null || true; wait "$bind_pid" 2>/dev/null || true; fi
  bind_pid=""
}

# flow_helm_install <release> <namespace> [helm flags...]: installs charts/nccl-operator and
# waits until the operator's Deployment is available (its pod Ready on the local node).
flow_helm_install() {
  local rel=$1 ns=$2; shift 2
  "$helm" install "$rel" "$flow_root/charts/nccl-operator" -n "$ns" --create-namespace "$@"
}

flow_wait_operator() {  # flow_wait_operator <release> <namespace>
  local deploy
  deploy=$("$kubectl" -n "$2" get deployments -l "app.kubernetes.io/instance=$1" -o name)
  "$kubectl" -n "$2" rollout status "$deploy" --timeout=60s
}
