#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for the real-node tests and the demo: the
# local control plane (tests/harness/controlplane) plus kube-scheduler, kube-proxy (iptables),
# CoreDNS for cluster.local, containerd 2 with runc and the CNI bridge, the kubelet, and
# Kubernetes' e2e DRA test driver as the node's device driver. Every program is built from its Go
# module at the versions pinned in tests/harness/versions.env (build.sh, cached).
#
#   realnode.sh up --dir D                 start all, wait for the Node to be Ready, write D/env
#   realnode.sh down --dir D               stop everything started in D, remove its containers,
#                                          mounts, interfaces and iptables rules (always safe)
#   realnode.sh import --dir D FILE.tar... import OCI image archives into the node's containerd
#   realnode.sh kubelet --dir D            restart only the kubelet of a running node with the
#                                          settings of this call (REALNODE_KUBELET_FEATURE_GATES);
#                                          the pods' containers keep running; waits until the
#                                          kubelet's /healthz (PLEG included) answers ok
#
# D/env holds KUBECONFIG, REALNODE_DIR, REALNODE_NAME, REALNODE_IP, REALNODE_BIN (containerd,
# runc, ctr, ...), CONTROLPLANE_BIN (kubectl, helm, kubelet, ...), REALNODE_CTR (a ctr
# command line for the node's containerd, namespace k8s.io), and for Dynamic Resource Allocation
# REALNODE_DRA_DRIVER (the test driver's name), REALNODE_DEVICE_CLASS (the DeviceClass of its
# devices) and REALNODE_CDI_DIR (where it writes the CDI specs containerd reads).
# Needs root, iptables and libseccomp-dev (runc's build); one real node per machine (the
# interfaces below are fixed). Settings ($VAR, default):
#   REALNODE_NAME (realnode)       the Node's name
#   REALNODE_POD_CIDR (10.248.0.0/24)  pod addresses on the CNI bridge rnbr0, whose .1 is the
#                                  node IP: the kubelet refuses a loopback node IP (and this
#                                  kernel has no dummy interfaces); kube-apiserver advertises it
#                                  (the kubernetes Service's endpoint), CoreDNS listens on it
#   REALNODE_REGISTRY (empty)      host:port of a plain-HTTP registry containerd pulls from
#   REALNODE_KUBELET_FEATURE_GATES (empty)  the kubelet's featureGates, as for --feature-gates
#                                  (e.g. EventedPLEG=true: container exits reach the kubelet as
#                                  CRI events instead of at its once-a-second relist)
# Cluster facts: service range 10.0.0.0/24 (kubernetes at 10.0.0.1), cluster DNS at the node
# IP, domain cluster.local. Devices: the DRA test driver (test-driver.cdi.k8s.io) runs on the
# host beside the kubelet, registers through the kubelet's plugins_registry, publishes a
# ResourceSlice of 4 devices for the node and, when the kubelet prepares a claim, writes a CDI
# spec whose env vars containerd puts into the containers that use it; DeviceClass
# dra-test-device selects its devices. This host is cgroup v1 and a VM whose PID 1 is not an init: the
# kubelet runs with failCgroupV1: false and cgroupDriver: cgroupfs, containerd's CRI with
# disable_apparmor and restrict_oom_score_adj (runc failed "can't get final child's PID from
# pipe: EOF" without them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../controlplane/lib.sh
source "$here/../controlplane/lib.sh"
cli_takes_files=1 cli_parse "$@"
log() { echo "[realnode] $*" >&2; }

node=${REALNODE_NAME:-realnode}
pod_cidr=${REALNODE_POD_CIDR:-10.248.0.0/24}
node_ip=${pod_cidr%.*/*}.1
registry=${REALNODE_REGISTRY:-}
kubelet_gates=${REALNODE_KUBELET_FEATURE_GATES:-}
bridge=rnbr0
cp="$dir/controlplane"
ctrd="$dir/containerd"
pause_image=localhost/realnode/pause:1
dra_driver=test-driver.cdi.k8s.io
device_class=dra-test-device
cdi_dir="$dir/cdi"

start() {  # start <name> <program> [args...]: in the background, pid in D/<name>.pid
  local name=$1; shift
  nohup "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! > "$dir/$name.pid"
}

alive_or_fail() {  # alive_or_fail <name>...: a process that died is reported with its log
  local n
  for n in "$@"; do
    if [ -f "$dir/$n.pid" ] && ! kill -0 "$(cat "$dir/$n.pid")" 2>/dev/null; then
      log "$n exited; last lines of $dir/logs/$n.log:"; tail -25 "$dir/logs/$n.log" >&2; return 1
    fi
  done
}

wait_for() {  # wait_for <seconds> <what> <command...>: poll until the command succeeds
  local secs=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    alive_or_fail containerd coredns kube-proxy kube-scheduler kubelet dra-driver || return 1
    [ "$(date +%s)" -lt "$deadline" ] || { log "$what not ready after ${secs}s (logs in $dir/logs)"; return 1; }
    sleep 0.3
  done
}

sign() { sign_cert "$cp/pki" "$dir/pki" "$@"; }  # sign <name> <subject> [san]: from the control plane's CA

# The bridge exists before the first pod, so the node IP does; the CNI bridge plugin finds it.
network_up() {
  ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
  ip addr replace "$node_ip/${pod_cidr#*/}" dev "$bridge"
  ip link set "$bridge" up
  sysctl -qw net.ipv4.ip_forward=1
  mkdir -p "$dir/cni/net.d"
  cat > "$dir/cni/net.d/10-realnode.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "realnode",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$dir/cni/ipam"}},
    {"type": "loopback"}
  ]
}
JSON
}

containerd_up() {
  mkdir -p "$ctrd/certs.d" "$cdi_dir"
  if [ -n "$registry" ]; then
    mkdir -p "$ctrd/certs.d/$registry"
    printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "$registry" "$registry" > "$ctrd/certs.d/$registry/hosts.toml"
  fi
  cat > "$ctrd/config.toml" <<TOML
version = 3
root = "$ctrd/root"
state = "$ctrd/state"

[grpc]
  address = "$ctrd/containerd.sock"

[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  cdi_spec_dirs = ['$cdi_dir']
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$REALNODE_BIN/runc'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$REALNODE_BIN']
    conf_dir = '$dir/cni/net.d'

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$pause_image'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '$ctrd/certs.d'

[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
TOML
  # The shim finds runc through PATH as well.
  PATH="$REALNODE_BIN:$PATH" start containerd "$REALNODE_BIN/containerd" --config "$ctrd/config.toml"
  wait_for 60 containerd "$REALNODE_BIN/ctr" --address "$ctrd/containerd.sock" version
  local pause_tar="$dir/pause.tar"
  if [ ! -f "$pause_tar" ]; then
    cc -static -O2 -o "$dir/pause" "$here/pause.c"
    strip "$dir/pause"
    "$here/oci_image.py" --name "$pause_image" --out "$pause_tar" --entrypoint /pause "$dir/pause=/pause"
  fi
  "$REALNODE_BIN/ctr" --address "$ctrd/containerd.sock" -n k8s.io images import "$pause_tar" >/dev/null
}

coredns_up() {
  local ready_port; ready_port=$(free_port)
  cat > "$dir/Corefile" <<CORE
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $node_ip
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $dir/coredns.kubeconfig local
        pods insecure
    }
    cache 5
    ready 127.0.0.1:$ready_port
}
CORE
  start coredns "$REALNODE_BIN/coredns" -conf "$dir/Corefile"
  echo "$ready_port" > "$dir/coredns.ready-port"
}

kube_proxy_up() {
  cat > "$dir/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $dir/kube-proxy.kubeconfig}
hostnameOverride: $node
clusterCIDR: $pod_cidr
bindAddress: $node_ip
healthzBindAddress: 127.0.0.1:$(free_port)
metricsBindAddress: 127.0.0.1:$(free_port)
nodePortAddresses: ["$node_ip/32"]
conntrack: {maxPerCore: 0}
YAML
  start kube-proxy "$CONTROLPLANE_BIN/kube-proxy" --config "$dir/kube-proxy.yaml"
}

gates_yaml() {  # gates_yaml "A=true,B=false" -> "A: true, B: false"
  local g sep=""
  for g in ${1//,/ }; do printf '%s%s: %s' "$sep" "${g%%=*}" "${g#*=}"; sep=", "; done
}

kubelet_up() {
  local port; port=$(free_port)
  printf 'nameserver %s\n' "$node_ip" > "$dir/resolv.conf"
  cat > "$dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$ctrd/containerd.sock
address: $node_ip
port: $port
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $dir/pki/kubelet-serving.crt
tlsPrivateKeyFile: $dir/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $cp/pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
clusterDNS: [$node_ip]
resolvConf: $dir/resolv.conf
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
podPidsLimit: -1
maxPods: 110
featureGates: {$(gates_yaml "$kubelet_gates")}
YAML
  start kubelet "$CONTROLPLANE_BIN/kubelet" --config "$dir/kubelet.yaml" \
    --kubeconfig "$dir/kubelet.kubeconfig" --hostname-override "$node" --node-ip "$node_ip" \
    --root-dir "$dir/kubelet" --cert-dir "$dir/pki" -v 2
}

# Kubernetes' e2e DRA test driver as the node's device driver, a host process like the kubelet:
# its registration socket in the kubelet's plugins_registry, its DRA socket under the kubelet's
# plugins dir, its CDI specs where containerd looks (cdi_spec_dirs). It publishes the node's
# ResourceSlice as user realnode:dra-driver (the permissions of the driver's own example RBAC).
# Started once the Node exists: the kubelet deletes the node's ResourceSlices when it starts.
dra_driver_up() {
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: realnode-dra-driver}
rules:
- {apiGroups: [resource.k8s.io], resources: [resourceslices], verbs: [get, list, watch, create, update, patch, delete]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims], verbs: [get]}
- {apiGroups: [""], resources: [nodes], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: realnode-dra-driver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: realnode-dra-driver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "realnode:dra-driver"}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $device_class}
spec:
  selectors: [{cel: {expression: 'device.driver == "$dra_driver"'}}]
YAML
  # It makes the plugins dir but not its own socket's dir under it; and it reads KUBECONFIG before
  # its --kubeconfig flag: give it its own.
  mkdir -p "$dir/kubelet/plugins/$dra_driver"
  KUBECONFIG="$dir/dra-driver.kubeconfig" start dra-driver "$CONTROLPLANE_BIN/dra-test-driver" \
    --drivername "$dra_driver" -v 3 kubelet-plugin --node-name "$node" --num-devices 4 \
    --plugin-registration-path "$dir/kubelet/plugins_registry" --datadir "$dir/kubelet/plugins" \
    --cdi-dir "$cdi_dir"
}

# The driver's ResourceSlice for the node is published (the scheduler allocates from it).
devices_published() {
  [ -n "$(kubectl get resourceslices --field-selector "spec.nodeName=$node,spec.driver=$dra_driver" -o name)" ]
}

# Ready, and the node lifecycle controller has removed the not-ready taint the kubelet registers with.
node_ready() {
  [ "$(kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}')" = True/ ]
}

dns_ready() { curl -sf "http://127.0.0.1:$(cat "$dir/coredns.ready-port")/ready"; }

# The kubelet's own health (its PLEG has relisted, the runtime answers), through the API server.
kubelet_healthy() { [ "$(kubectl get --raw "/api/v1/nodes/$node/proxy/healthz" 2>/dev/null)" = ok ]; }

restart_kubelet() {
  [ -f "$dir/kubelet.pid" ] && [ -f "$dir/env" ] || { log "no running node in $dir (realnode.sh up first)"; return 1; }
  # shellcheck source=/dev/null
  source "$dir/env"
  export PATH="$CONTROLPLANE_BIN:$PATH"
  stop_pid kubelet
  kubelet_up
  wait_for 60 "the kubelet's health" kubelet_healthy
  wait_for 60 "node $node" node_ready
  log "kubelet restarted${kubelet_gates:+ with feature gates $kubelet_gates}"
}

up() {
  [ "$(id -u)" = 0 ] || { log "needs root (interfaces, mounts, iptables)"; return 1; }
  command -v iptables >/dev/null || { log "needs iptables (kube-proxy): apt-get install iptables"; return 1; }
  local bins; bins=$("$here/build.sh")
  REALNODE_BIN=$(sed -n 1p <<<"$bins"); CONTROLPLANE_BIN=$(sed -n 2p <<<"$bins")
  [ -f "$dir/kubelet.pid" ] && down
  mkdir -p "$dir/logs"
  local started; started=$(date +%s)
  network_up
  CONTROLPLANE_BIND_ADDRESS=0.0.0.0 \
  CONTROLPLANE_APISERVER_FLAGS="${CONTROLPLANE_APISERVER_FLAGS:-} --advertise-address=$node_ip" \
  CONTROLPLANE_EXTRA_CONTROLLERS=endpoints-controller,endpointslice-controller,node-lifecycle-controller,resourceclaim-controller \
    "$here/../controlplane/controlplane.sh" up --dir "$cp"
  # shellcheck source=/dev/null
  source "$cp/env"
  export PATH="$CONTROLPLANE_BIN:$PATH"
  sign kubelet "/O=system:nodes/CN=system:node:$node"
  sign kubelet-serving "/CN=$node" "IP:$node_ip,DNS:$node"
  sign kube-proxy "/CN=system:kube-proxy"
  sign kube-scheduler "/CN=system:kube-scheduler"
  sign coredns "/CN=realnode:coredns"
  sign dra-driver "/CN=realnode:dra-driver"
  local c; for c in kubelet kube-proxy kube-scheduler coredns dra-driver; do
    write_kubeconfig "$dir/$c.kubeconfig" "$APISERVER_URL" "$cp/pki/ca.crt" "$dir/pki" "$c"
  done
  # Without the Node authorizer the kubelet gets the system:node role through RBAC; CoreDNS
  # reads Services, EndpointSlices, Pods and Namespaces.
  kubectl apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: realnode-kubelet}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:node}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:node:$node"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: realnode-coredns}
rules:
- {apiGroups: [""], resources: [services, pods, namespaces, endpoints], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: realnode-coredns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: realnode-coredns}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "realnode:coredns"}]
YAML
  containerd_up
  coredns_up
  kube_proxy_up
  start kube-scheduler "$CONTROLPLANE_BIN/kube-scheduler" --kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig" --leader-elect=false --secure-port=0
  kubelet_up
  wait_for 120 "node $node" node_ready
  dra_driver_up
  wait_for 60 CoreDNS dns_ready
  wait_for 60 "the DRA test driver's ResourceSlice" devices_published
  cat > "$dir/env" <<ENV
export REALNODE_DIR=$dir
export REALNODE_NAME=$node
export REALNODE_IP=$node_ip
export REALNODE_BIN=$REALNODE_BIN
export CONTROLPLANE_BIN=$CONTROLPLANE_BIN
export CONTROLPLANE_DIR=$cp
export APISERVER_URL=$APISERVER_URL
export KUBECONFIG=$cp/kubeconfig
export REALNODE_CTR="$REALNODE_BIN/ctr --address $ctrd/containerd.sock -n k8s.io"
export REALNODE_DRA_DRIVER=$dra_driver
export REALNODE_DEVICE_CLASS=$device_class
export REALNODE_CDI_DIR=$cdi_dir
ENV
  log "node $node Ready in $(( $(date +%s) - started ))s (source $dir/env)"
}

# Everything under D that is mounted (container root filesystems, pod volumes, network
# namespaces), deepest first.
unmount_all() {
  local m
  awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
}

# Shims outlive containerd; ours carry its socket address on their command line.
stop_shims() {
  local p
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -q -- "-address $ctrd/containerd.sock"; then
      kill -9 "${p#/proc/}" 2>/dev/null || true
    fi
  done
}

# What the kubelet leaves in iptables (KUBE-FIREWALL, canary chains) after kube-proxy --cleanup.
remove_kube_iptables() {
  local ipt t rule chain
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle; do
      "$ipt" -t "$t" -S 2>/dev/null | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-' |
        while read -r rule; do eval "$ipt -t $t ${rule/-A/-D}" 2>/dev/null || true; done || true
      for chain in $("$ipt" -t "$t" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}'); do "$ipt" -t "$t" -F "$chain" 2>/dev/null || true; done
      for chain in $("$ipt" -t "$t" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}'); do "$ipt" -t "$t" -X "$chain" 2>/dev/null || true; done
    done
  done
}

down() {
  stop_pid dra-driver
  stop_pid kubelet
  stop_pid kube-scheduler
  local bin="${REALNODE_BIN:-}"
  [ -n "$bin" ] || bin=$(sed -n 's/^export REALNODE_BIN=//p' "$dir/env" 2>/dev/null || true)
  if [ -f "$dir/containerd.pid" ] && [ -x "$bin/ctr" ]; then
    local ctr=("$bin/ctr" --address "$ctrd/containerd.sock" -n k8s.io) t
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks rm -f "$t" >/dev/null 2>&1 || true; done
    for t in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers rm "$t" >/dev/null 2>&1 || true; done
  fi
  stop_pid containerd
  stop_shims
  if [ -f "$dir/kube-proxy.pid" ]; then
    stop_pid kube-proxy
    local kp; kp=$(sed -n 's/^export CONTROLPLANE_BIN=//p' "$dir/env" 2>/dev/null || true)/kube-proxy
    [ -x "$kp" ] && "$kp" --cleanup >/dev/null 2>&1 || true
  fi
  remove_kube_iptables
  stop_pid coredns
  unmount_all
  ip link del "$bridge" 2>/dev/null || true
  rm -rf "$dir/cni/ipam" "$cdi_dir"
  "$here/../controlplane/controlplane.sh" down --dir "$cp"
  # Empty pod cgroups the kubelet made (cgroupfs driver), deepest first.
  local d
  for d in /sys/fs/cgroup/*/kubepods; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  rm -f "$dir/env"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  kubelet) restart_kubelet ;;
  import)
    # shellcheck source=/dev/null
    source "$dir/env"
    for f in "${files[@]}"; do $REALNODE_CTR images import "$f" >/dev/null; done
    ;;
  *) echo "realnode.sh: unknown command $cmd (up|down|import|kubelet)" >&2; exit 2 ;;
esac
