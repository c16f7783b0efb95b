#!/usr/bin/env bash
# A real local Kubernetes control plane for tests and the demo: etcd, kube-apiserver (TLS,
# RBAC, service-account token signing) and kube-controller-manager (garbage collection,
# service accounts, namespaces, Jobs, Deployments/ReplicaSets, ResourceQuotas) on free loopback ports.
#
#   controlplane.sh up --dir D          start, wait for /readyz, write D/kubeconfig and D/env
#   controlplane.sh down --dir D        stop everything started in D (always safe to call)
#   controlplane.sh restart-apiserver --dir D   stop kube-apiserver and start it again, same port
#   controlplane.sh status --dir D      exit 0 when /readyz answers ok
#
# D/env holds: KUBECONFIG, APISERVER_URL, ETCD_URL, CONTROLPLANE_BIN, CONTROLPLANE_DIR.
# Extra kube-apiserver flags can be passed in $CONTROLPLANE_APISERVER_FLAGS, extra
# kube-controller-manager flags in $CONTROLPLANE_CONTROLLER_MANAGER_FLAGS.
# Native gang scheduling is on: kube-apiserver serves the scheduling.k8s.io version of the pinned
# Kubernetes (v1alpha1 on 1.35, v1alpha2 on 1.36, v1beta1 on 1.37) with its feature gates, and on
# 1.36+ kube-controller-manager runs the podgroup-protection-controller (lib.sh's gang_flags).
# $CONTROLPLANE_FEATURE_GATES replaces the gates; CONTROLPLANE_FEATURE_GATES= (empty) turns gang off.
# $CONTROLPLANE_BIND_ADDRESS (default 127.0.0.1) is where kube-apiserver listens; 0.0.0.0 lets
# pods of the local node (tests/harness/node, bridge 10.244.0.1) reach it directly.
# $CONTROLPLANE_EXTRA_SANS adds entries (e.g. IP:10.245.0.1) to the apiserver certificate.
# $CONTROLPLANE_EXTRA_CONTROLLERS adds kube-controller-manager controllers (comma-separated, e.g.
# endpointslice-controller for cluster DNS on tests/harness/realnode).
# kube-apiserver reaches nodes' log endpoints (kubectl logs) with the admin client cert and
# verifies their serving certs against pki/ca.crt (added for tests/harness/node).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
cli_parse "$@"
log() { echo "[controlplane] $*" >&2; }

wait_ready() {  # wait_ready <seconds>
  local deadline=$(( $(date +%s) + $1 ))
  # shellcheck source=/dev/null
  source "$dir/env"
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if curl -sf --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
         "$APISERVER_URL/readyz" >/dev/null 2>&1; then return 0; fi
    for p in apiserver etcd; do
      if [ -f "$dir/$p.pid" ] && ! kill -0 "$(cat "$dir/$p.pid")" 2>/dev/null; then
        log "$p exited; last lines of $dir/logs/$p.log:"; tail -20 "$dir/logs/$p.log" >&2; return 1
      fi
    done
    sleep 0.2
  done
  log "kube-apiserver not ready after $1s; see $dir/logs/apiserver.log"; return 1
}

make_pki() {
  local pki="$dir/pki"; mkdir -p "$pki"; cd "$pki"
  if [ -f ca.crt ]; then sign_apiserver_if_needed; cd - >/dev/null; return 0; fi
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=nccl-operator-test-ca" 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  sign_all
  cd - >/dev/null
}

sign() { sign_cert "$dir/pki" "$dir/pki" "$@"; }  # sign <name> <subject> [san]

# The apiserver SANs include 10.244.0.1, the local node's bridge (tests/harness/node), so pods can
# verify the API server there, and 10.246.0-23.1, the bridges of the end-to-end flow and chaos
# tests (tests/e2e/flow: one node per test); a pki made before that (or with other extra SANs) is re-signed.
apiserver_sans() {
  local flow_bridges="" i
  for i in $(seq 0 23); do flow_bridges="$flow_bridges,IP:10.246.$i.1"; done
  echo "IP:127.0.0.1,IP:10.0.0.1,IP:10.244.0.1$flow_bridges,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local${CONTROLPLANE_EXTRA_SANS:+,$CONTROLPLANE_EXTRA_SANS}"
}

sign_apiserver_if_needed() {  # (run in the pki dir)
  [ -f apiserver.crt ] && [ "$(cat apiserver.sans 2>/dev/null)" = "$(apiserver_sans)" ] && return 0
  sign apiserver "/CN=kube-apiserver" "$(apiserver_sans)"
  apiserver_sans > apiserver.sans
}

sign_all() {
  sign_apiserver_if_needed
  sign admin "/O=system:masters/CN=admin"
  sign controller-manager "/CN=system:kube-controller-manager"
}

# Since 1.37 kube-apiserver refuses a loopback --advertise-address with its default endpoint
# reconciler; the kubernetes Service's endpoints are of no use at 127.0.0.1 anyway, so none keeps
# them. A node of its own (realnode.sh) passes its address, and keeps the reconciler.
advertise_flags() {
  case " ${CONTROLPLANE_APISERVER_FLAGS:-} " in
    *" --advertise-address="*) ;;
    *) echo "--advertise-address=127.0.0.1 --endpoint-reconciler-type=none" ;;
  esac
}

# kube-controller-manager's podgroup-protection-controller where there are PodGroups (1.36+) and
# gang scheduling is on.
gang_controllers() {
  if [ -n "$(gang_flags controller-manager)" ]; then echo ",podgroup-protection-controller"; fi
}

start_apiserver() {
  # shellcheck source=/dev/null
  source "$dir/env"
  local port=${APISERVER_URL##*:}
  # shellcheck disable=SC2086
  nohup "$CONTROLPLANE_BIN/kube-apiserver" \
    --etcd-servers="$ETCD_URL" --bind-address="${CONTROLPLANE_BIND_ADDRESS:-127.0.0.1}" $(advertise_flags) \
    --secure-port="$port" --cert-dir="$dir/pki" \
    --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" --authorization-mode=RBAC \
    --service-account-key-file="$dir/pki/sa.pub" --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc --service-cluster-ip-range=10.0.0.0/24 \
    --allow-privileged=true --profiling=false --enable-priority-and-fairness=false \
    --kubelet-client-certificate="$dir/pki/admin.crt" --kubelet-client-key="$dir/pki/admin.key" \
    --kubelet-certificate-authority="$dir/pki/ca.crt" --kubelet-preferred-address-types=InternalIP,Hostname \
    $(gang_flags apiserver) ${CONTROLPLANE_APISERVER_FLAGS:-} >"$dir/logs/apiserver.log" 2>&1 &
  echo $! > "$dir/apiserver.pid"
}

case "$cmd" in
  up)
    bin=$("$here/build.sh" | tail -1)
    mkdir -p "$dir/logs"
    [ -f "$dir/apiserver.pid" ] && "$0" down --dir "$dir"
    make_pki
    etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port "${CONTROLPLANE_BIND_ADDRESS:-127.0.0.1}")
    cat > "$dir/env" <<ENV
export CONTROLPLANE_DIR=$dir
export CONTROLPLANE_BIN=$bin
export ETCD_URL=http://127.0.0.1:$etcd_port
export APISERVER_URL=https://127.0.0.1:$api_port
export KUBECONFIG=$dir/kubeconfig
ENV
    # shellcheck source=/dev/null
    source "$dir/env"
    rm -rf "$dir/etcd-data"
    nohup "$bin/etcd" --data-dir="$dir/etcd-data" --name=default \
      --listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
      --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
      --initial-cluster="default=http://127.0.0.1:$peer_port" --unsafe-no-fsync \
      >"$dir/logs/etcd.log" 2>&1 &
    echo $! > "$dir/etcd.pid"
    start_apiserver
    write_kubeconfig "$dir/kubeconfig" "$APISERVER_URL" "$dir/pki/ca.crt" "$dir/pki" admin
    write_kubeconfig "$dir/controller-manager.kubeconfig" "$APISERVER_URL" "$dir/pki/ca.crt" "$dir/pki" controller-manager
    started=$(date +%s)
    wait_ready 90
    # shellcheck disable=SC2086
    nohup "$bin/kube-controller-manager" --kubeconfig="$dir/controller-manager.kubeconfig" \
      --authentication-kubeconfig="$dir/controller-manager.kubeconfig" \
      --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
      --controllers=garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,namespace-controller,job-controller,deployment-controller,replicaset-controller,clusterrole-aggregation-controller,root-ca-certificate-publisher-controller,resourcequota-controller$(gang_controllers)${CONTROLPLANE_EXTRA_CONTROLLERS:+,$CONTROLPLANE_EXTRA_CONTROLLERS} \
      --service-account-private-key-file="$dir/pki/sa.key" --root-ca-file="$dir/pki/ca.crt" \
      --leader-elect=false --secure-port=0 --use-service-account-credentials=true \
      $(gang_flags controller-manager) ${CONTROLPLANE_CONTROLLER_MANAGER_FLAGS:-} >"$dir/logs/controller-manager.log" 2>&1 &
    echo $! > "$dir/controller-manager.pid"
    log "ready in $(( $(date +%s) - started ))s at $APISERVER_URL (KUBECONFIG=$dir/kubeconfig)"
    ;;
  down)
    for p in controller-manager apiserver etcd; do stop_pid "$p"; done
    ;;
  restart-apiserver)
    stop_pid apiserver
    start_apiserver
    wait_ready 60
    ;;
  status)
    curl -sf --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
      "$(. "$dir/env"; echo "$APISERVER_URL")/readyz" >/dev/null
    ;;
  *) echo "controlplane.sh: unknown command $cmd (up|down|restart-apiserver|status)" >&2; exit 2 ;;
esac
