#!/usr/bin/env bash
# The local node (tests/harness/node/testnode) runs pods against the shared control plane fixture:
#  - a pod with a native sidecar (python http.server, startup + readiness probes) and a main
#    container (/bin/sh): env from the downward API and $(VAR) expansion, the ServiceAccount
#    token mounted, its own IP on eth0, the sidecar reachable on localhost, the API server
#    reachable and verified through KUBERNETES_SERVICE_HOST; Ready while it runs, then
#    Succeeded with exit code 0, the sidecar stopped; kubectl logs returns the output;
#  - a failing container gives phase Failed with its exit code;
#  - the debug kill endpoint SIGKILLs a container (exit code 137);
#  - deletion removes the pod at once; SIGTERM to the node removes its netns and bridge.
# This node has its own name, bridge and subnet and does not schedule (pods name the node),
# so it does not touch other tests' pods on the shared control plane.
#
# Env (set by CTest): NCCLOP_TEST_CONTROLPLANE_DIR, NCCLOP_TEST_KUBECONFIG, NCCLOP_TEST_KUBECTL.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
: "${NCCLOP_TEST_KUBECONFIG:?run through ctest (needs the controlplane fixture)}"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root, iproute2 and unshare (network namespaces)"; exit 77
fi
export KUBECONFIG=$NCCLOP_TEST_KUBECONFIG
kubectl=$NCCLOP_TEST_KUBECTL
pki=$NCCLOP_TEST_CONTROLPLANE_DIR/pki

bin=$("$root/tests/harness/node/build.sh" | tail -1)
id="$$"
node="node-e2e-$id"
ns="node-e2e-$id"
bridge="tnb$((id % 100000))"
octet=$(( (id % 200) + 20 ))
subnet="10.245.$octet"
work=$(mktemp -d)
node_pid=""

failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }
check() {  # check <description> <actual> <expected>
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}
contains() {  # contains <description> <haystack> <needle>
  if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1: '$3' not in: $2"; fi
}
jp() { "$kubectl" -n "$ns" get pod "$1" -o "jsonpath=$2"; }

cleanup() {
  if [ -n "$node_pid" ] && kill -0 "$node_pid" 2>/dev/null; then kill -TERM "$node_pid"; wait "$node_pid" || true; fi
  "$kubectl" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete node "$node" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" --node-name "$node" --schedule=false --port 0 --state-dir "$work/state" \
  --bridge "$bridge" --pod-cidr "$subnet.0/24" --ca-cert "$pki/ca.crt" --ca-key "$pki/ca.key" \
  --kubeconfig "$KUBECONFIG" >"$work/node.log" 2>&1 &
node_pid=$!
# wait_until <seconds> <command...>: polls until the command succeeds; 1 after the deadline.
wait_until() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}
# Longer than the node's own 60 s registration deadline, so its own error is what shows.
deadline=$(( $(date +%s) + 120 ))
until [ -f "$work/state/ready" ]; do
  kill -0 "$node_pid" 2>/dev/null || { cat "$work/node.log"; echo "FAIL node exited"; exit 1; }
  [ "$(date +%s)" -lt "$deadline" ] || { cat "$work/node.log"; echo "FAIL node not ready in 120s"; exit 1; }
  sleep 0.1
done
"$kubectl" wait --for=condition=Ready "node/$node" --timeout=60s >/dev/null
pass "node $node registered and Ready"
# The node makes its Lease after it is ready (its heartbeat), so it may not exist yet.
lease_held() { [ "$("$kubectl" -n kube-node-lease get lease "$node" -o jsonpath='{.spec.holderIdentity}')" = "$node" ]; }
wait_until 60 lease_held && pass "lease renewed" || fail "lease renewed: no Lease held by $node within 60 s"
check "kubelet endpoint port" "$("$kubectl" get node "$node" -o jsonpath='{.status.daemonEndpoints.kubeletEndpoint.Port}')" \
  "$(sed -n 's/^port=//p' "$work/state/ready")"
"$kubectl" create namespace "$ns" >/dev/null
# The pod reads itself with its ServiceAccount token: proves the token is valid.
# (a Role of its own: the aggregated "view" role is empty without the aggregation controller)
"$kubectl" -n "$ns" create role pod-reader --verb=get --resource=pods >/dev/null
"$kubectl" -n "$ns" create rolebinding pod-reader --role=pod-reader --serviceaccount="$ns:default" >/dev/null
mkdir -p "$work/release"

cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: ok
  labels: {role: trainer}
spec:
  nodeName: $node
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  volumes:
  - {name: release, hostPath: {path: $work/release}}
  initContainers:
  - name: sidecar
    image: python
    restartPolicy: Always
    command: [python3, -m, http.server, "8080", --bind, 0.0.0.0]
    ports: [{name: http, containerPort: 8080}]
    startupProbe: {httpGet: {path: /, port: http}, periodSeconds: 1, failureThreshold: 60}
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
  containers:
  - name: main
    image: shell
    command: [/bin/sh, -c]
    args:
    - |
      echo "POD_NAME=\$POD_NAME POD_NS=\$POD_NS ROLE=\$ROLE ADDR=\$(ADDR)"
      test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-ok
      echo "ns-file=\$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)"
      echo "eth0=\$(ip -4 -o addr show eth0 | awk '{print \$4}')"
      python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8080/", timeout=5); print("sidecar-ok")'
      sa=/var/run/secrets/kubernetes.io/serviceaccount
      # The apiserver certificate names kubernetes.default.svc (this bridge's IP is not a SAN).
      curl -sf --cacert \$sa/ca.crt -H "Authorization: Bearer \$(cat \$sa/token)" \
        --resolve "kubernetes.default.svc:\$KUBERNETES_SERVICE_PORT:\$KUBERNETES_SERVICE_HOST" \
        "https://kubernetes.default.svc:\$KUBERNETES_SERVICE_PORT/api/v1/namespaces/\$POD_NS/pods/\$POD_NAME" \
        | grep -q '"uid"' && echo api-ok
      while [ ! -e /release/go ]; do sleep 0.1; done
      echo done
    volumeMounts: [{name: release, mountPath: /release}]
    env:
    - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: POD_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: ROLE, valueFrom: {fieldRef: {fieldPath: "metadata.labels['role']"}}}
    - {name: ADDR, value: "\$(POD_IP):29500"}
YAML
if "$kubectl" -n "$ns" wait --for=condition=Ready pod/ok --timeout=90s >/dev/null; then
  pass "pod ok Ready while running (sidecar probes passed)"
else
  fail "pod ok never Ready"; "$kubectl" -n "$ns" get pod ok -o yaml >&2 || true
fi
check "phase Running while main runs" "$(jp ok '{.status.phase}')" Running
check "sidecar ready" "$(jp ok '{.status.initContainerStatuses[0].ready}')" true
touch "$work/release/go"
"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded pod/ok --timeout=60s >/dev/null \
  && pass "pod ok Succeeded" || fail "pod ok phase $(jp ok '{.status.phase}')"
ip=$(jp ok '{.status.podIP}')
case "$ip" in "$subnet".*) pass "podIP $ip in $subnet.0/24" ;; *) fail "podIP '$ip' not in $subnet.0/24" ;; esac
check "podIPs" "$(jp ok '{.status.podIPs[0].ip}')" "$ip"
check "hostIP" "$(jp ok '{.status.hostIP}')" 127.0.0.1
check "main exit code" "$(jp ok '{.status.containerStatuses[0].state.terminated.exitCode}')" 0
check "main reason" "$(jp ok '{.status.containerStatuses[0].state.terminated.reason}')" Completed
# python3 dies of the SIGTERM that stops the sidecar: 128+15, as a kubelet reports it.
check "sidecar stopped after main" "$(jp ok '{.status.initContainerStatuses[0].state.terminated.exitCode}')" 143
check "Initialized" "$(jp ok '{.status.conditions[?(@.type=="Initialized")].status}')" True
check "PodScheduled" "$(jp ok '{.status.conditions[?(@.type=="PodScheduled")].status}')" True
check "Ready after completion" "$(jp ok '{.status.conditions[?(@.type=="Ready")].reason}')" PodCompleted
logs=$("$kubectl" -n "$ns" logs ok -c main)
contains "logs: downward API + \$(VAR)" "$logs" "POD_NAME=ok POD_NS=$ns ROLE=trainer ADDR=$ip:29500"
contains "logs: token mounted" "$logs" token-ok
contains "logs: namespace file" "$logs" "ns-file=$ns"
contains "logs: eth0 has the pod IP" "$logs" "eth0=$ip/24"
contains "logs: sidecar on localhost" "$logs" sidecar-ok
contains "logs: API server verified via KUBERNETES_SERVICE_HOST" "$logs" api-ok
check "logs --tail=1" "$("$kubectl" -n "$ns" logs ok -c main --tail=1)" done
contains "sidecar logs" "$("$kubectl" -n "$ns" logs ok -c sidecar)" "GET / HTTP"

cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: fails}
spec:
  nodeName: $node
  restartPolicy: Never
  containers:
  - {name: main, image: shell, command: [/bin/sh, -c, "echo about to fail; exit 3"]}
---
apiVersion: v1
kind: Pod
metadata: {name: killed}
spec:
  nodeName: $node
  restartPolicy: Never
  containers:
  - {name: trainer, image: shell, command: [/bin/sh, -c, "echo training; while true; do sleep 0.2; done"]}
YAML
"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Failed pod/fails --timeout=60s >/dev/null \
  && pass "failing pod Failed" || fail "failing pod phase $(jp fails '{.status.phase}')"
check "failing exit code" "$(jp fails '{.status.containerStatuses[0].state.terminated.exitCode}')" 3
check "failing reason" "$(jp fails '{.status.containerStatuses[0].state.terminated.reason}')" Error
check "failing logs" "$("$kubectl" -n "$ns" logs fails)" "about to fail"

"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Running pod/killed --timeout=60s >/dev/null
pidfile="$work/state/pids/$ns/killed/trainer"
[ -s "$pidfile" ] && pass "pid file $pidfile" || fail "no pid file $pidfile"
debug=$(cat "$work/state/debug-addr")
curl -sf -X POST "http://$debug/debug/kill?namespace=$ns&pod=killed&container=trainer&signal=KILL" >/dev/null \
  && pass "debug kill accepted" || fail "debug kill refused"
"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Failed pod/killed --timeout=60s >/dev/null \
  && pass "killed pod Failed" || fail "killed pod phase $(jp killed '{.status.phase}')"
check "killed exit code" "$(jp killed '{.status.containerStatuses[0].state.terminated.exitCode}')" 137

"$kubectl" -n "$ns" delete pod ok fails killed --timeout=120s >/dev/null && pass "pods deleted" || fail "pod deletion"
check "no pods left" "$("$kubectl" -n "$ns" get pods -o name)" ""

kill -TERM "$node_pid"; wait "$node_pid" || true; node_pid=""
check "node netns removed" "$(ip netns list | grep -c "^tn-$node-" || true)" 0
ip link show "$bridge" >/dev/null 2>&1 && fail "bridge $bridge left behind" || pass "bridge $bridge removed"
check "node NotReady after stop" "$("$kubectl" get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" False

if [ "$failures" -gt 0 ]; then
  echo "---- node log"; cat "$work/node.log"; echo "$failures check(s) failed"; exit 1
fi
echo "all node checks passed"
