#!/usr/bin/env bash
# The local node (tests/harness/node/testnode) runs pods against the shared control plane fixture:
#  - a pod with a native sidecar (python http.server, startup + readiness probes) and a main
#    container (/bin/sh): env from the downward API and $(VAR) expansion, the ServiceAccount
#    token mounted, its own IP on eth0, the sidecar reachable on localhost, the API server
#    reachable and verified through KUBERNETES_SERVICE_HOST; Ready while it runs, then
#    Succeeded with exit code 0, the sidecar stopped; kubectl logs returns the output;
#  - a failing container gives phase Failed with its exit code;
#  - the debug kill endpoint SIGKILLs a container (exit code 137);
#  - container restart rules as kubelet 1.37 applies them: a Restart rule over the pod's Never; the
#    crash-loop back-off of --restart-backoff-initial/--restart-backoff-max; on 1.36+ the Node
#    declares RestartAllContainersOnContainerExits, and a RestartAllContainers rule restarts every
#    container of a pod in place (main container exits 3 under NotIn [0]; a sidecar exits 85 under
#    In [85]): same UID and IP, emptyDir kept, init containers rerun, every restartCount 1 with the
#    kubelet's lastState (137, RestartingAllContainers), AllContainersRestarting set and cleared,
#    never Failed;
#  - termination messages: a container's file at /dev/termination-log (a fresh one each start) gives
#    state.terminated.message, kept in lastState across a sidecar's restart; the kubelet's size
#    limits (4096 bytes a file, 12 KiB a pod); FallbackToLogsOnError takes the log's last 80 lines;
#    a RestartAllContainers trigger's message is in the status that starts it;
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
  if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: '$3' not in: $2"; fi
}
jp() { "$kubectl" -n "$ns" get pod "$1" -o "jsonpath=$2"; }

watch_pids=()
cleanup() {
  for w in "${watch_pids[@]}"; do kill "$w" 2>/dev/null || true; done
  if [ -n "$node_pid" ] && kill -0 "$node_pid" 2>/dev/null; then kill -TERM "$node_pid"; wait "$node_pid" || true; fi
  "$kubectl" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete node "$node" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" --node-name "$node" --schedule=false --port 0 --state-dir "$work/state" \
  --bridge "$bridge" --pod-cidr "$subnet.0/24" --ca-cert "$pki/ca.crt" --ca-key "$pki/ca.key" \
  --restart-backoff-initial 2s --restart-backoff-max 4s \
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

# ---- container restart rules (tests/harness/node/README.md "Restart rules")
cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: rule-restart}
spec:
  nodeName: $node
  restartPolicy: Never
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - name: main
    image: shell
    restartPolicy: Never
    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [7]}}]
    command: [/bin/sh, -c, "if [ -e /mnt/scratch/ran ]; then exit 0; fi; touch /mnt/scratch/ran; exit 7"]
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}]
---
apiVersion: v1
kind: Pod
metadata: {name: crashloop}
spec:
  nodeName: $node
  restartPolicy: OnFailure
  containers:
  - {name: main, image: shell, command: [/bin/sh, -c, "exit 1"]}
YAML
"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded pod/rule-restart --timeout=60s >/dev/null \
  && pass "Restart rule In [7] over the pod's Never: Succeeded" || fail "rule-restart phase $(jp rule-restart '{.status.phase}')"
check "Restart rule: restartCount" "$(jp rule-restart '{.status.containerStatuses[0].restartCount}')" 1
check "Restart rule: lastState" "$(jp rule-restart '{.status.containerStatuses[0].lastState.terminated.exitCode} {.status.containerStatuses[0].lastState.terminated.reason}')" "7 Error"
# The first restart is immediate, then 2 s, then 4 s (the cap) between restarts.
backoff_at() { jp crashloop '{.status.containerStatuses[0].state.waiting.message}' | grep -qF "back-off $1 restarting failed container=main pod=crashloop_$ns("; }
wait_until 30 backoff_at 2s && pass "crash loop: back-off 2s (--restart-backoff-initial)" \
  || fail "crash loop: no 'back-off 2s' wait: $(jp crashloop '{.status.containerStatuses[0].state}')"
wait_until 30 backoff_at 4s && pass "crash loop: back-off 4s (--restart-backoff-max)" \
  || fail "crash loop: no 'back-off 4s' wait: $(jp crashloop '{.status.containerStatuses[0].state}')"
check "crash loop: waiting reason" "$(jp crashloop '{.status.containerStatuses[0].state.waiting.reason}')" CrashLoopBackOff
check "crash loop: phase" "$(jp crashloop '{.status.phase}')" Running

# ---- termination messages (tests/harness/node/README.md "What a pod gets"): a sidecar writes why it
# exits 86 and restarts (the message stays in its lastState, the new start has an empty file); a
# container writes one and exits 3; one writes 5000 bytes (its last 4096 kept, then the first
# 12288/4 of those, 4 containers); FallbackToLogsOnError with nothing written takes the last 80
# log lines.
cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: term-msg}
spec:
  nodeName: $node
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: release, hostPath: {path: $work/release}}
  initContainers:
  - name: sidecar
    image: shell
    restartPolicy: Always
    command: [/bin/sh, -c]
    args:
    - |
      echo run >> /mnt/scratch/sidecar-runs
      echo "termination-log at start: \$(wc -c < /dev/termination-log) bytes"
      if [ "\$(wc -l < /mnt/scratch/sidecar-runs)" -eq 1 ]; then
        printf 'rank 1 stalled at step 7' > /dev/termination-log
        exit 86
      fi
      while true; do sleep 0.2; done
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}]
  containers:
  - name: writer
    image: shell
    command: [/bin/sh, -c, "while [ ! -e /release/term-msg-go ]; do sleep 0.1; done; printf 'NCCL timeout on rank 3' > /dev/termination-log; exit 3"]
    volumeMounts: [{name: release, mountPath: /release}]
  - name: long
    image: shell
    command: [/bin/sh, -c, "printf '%0904d' 0 | tr 0 a > /dev/termination-log; printf '%04096d' 0 | tr 0 b >> /dev/termination-log"]
  - name: logs
    image: shell
    terminationMessagePolicy: FallbackToLogsOnError
    command: [/bin/sh, -c, "seq 1 100 | sed 's/^/log line /'; exit 2"]
YAML
sidecar_restarted() {
  [ "$(jp term-msg '{.status.initContainerStatuses[0].restartCount}')" = 1 ] &&
    [ -n "$(jp term-msg '{.status.initContainerStatuses[0].state.running.startedAt}')" ]
}
wait_until 60 sidecar_restarted && pass "term-msg: the sidecar exited 86 and runs again" \
  || fail "term-msg: sidecar $(jp term-msg '{.status.initContainerStatuses[0]}')"
check "term-msg: the sidecar's message in lastState" \
  "$(jp term-msg '{.status.initContainerStatuses[0].lastState.terminated.exitCode}:{.status.initContainerStatuses[0].lastState.terminated.message}')" \
  "86:rank 1 stalled at step 7"
sidecar_log_has() { "$kubectl" -n "$ns" logs term-msg -c sidecar | grep -qF "$1"; }
wait_until 30 sidecar_log_has "termination-log at start:" || true
check "term-msg: the restarted sidecar has an empty file of its own" \
  "$("$kubectl" -n "$ns" logs term-msg -c sidecar)" "termination-log at start: 0 bytes"
touch "$work/release/term-msg-go"  # writer exits 3
"$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Failed pod/term-msg --timeout=60s >/dev/null \
  && pass "term-msg: Failed" || fail "term-msg phase $(jp term-msg '{.status.phase}')"
tmsg() { jp term-msg "{.status.containerStatuses[?(@.name==\"$1\")].state.terminated.message}"; }
check "term-msg: state.terminated.message of a container that exited 3" \
  "$(jp term-msg '{.status.containerStatuses[?(@.name=="writer")].state.terminated.exitCode}'):$(tmsg writer)" "3:NCCL timeout on rank 3"
long=$(tmsg long)
check "term-msg: 5000 bytes written: the file's last 4096, cut to 12288/4" \
  "${#long} $(printf %s "$long" | tr -d b | wc -c)" "3072 0"
logs_msg=$(tmsg logs)
check "term-msg: FallbackToLogsOnError: the last 80 log lines" \
  "$(printf '%s\n' "$logs_msg" | wc -l) $(printf '%s\n' "$logs_msg" | head -1) $(printf '%s\n' "$logs_msg" | tail -1)" \
  "80 log line 21 log line 100"
check "term-msg: the sidecar's lastState kept once the pod ended" \
  "$(jp term-msg '{.status.initContainerStatuses[0].lastState.terminated.message}')" "rank 1 stalled at step 7"
check "term-msg: the sidecar stopped with an empty message" \
  "$(jp term-msg '{.status.initContainerStatuses[0].state.terminated.exitCode}:{.status.initContainerStatuses[0].state.terminated.message}')" "143:"

minor=$("$kubectl" get --raw /version | sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p')
restart_all_pods=""
if [ "${minor:-0}" -lt 36 ]; then
  echo "skip RestartAllContainers: Kubernetes 1.$minor's API server refuses the action (gate RestartAllContainersOnContainerExits is alpha, off)"
else
  contains "Node declares RestartAllContainersOnContainerExits" \
    "$("$kubectl" get node "$node" -o jsonpath='{.status.declaredFeatures}')" RestartAllContainersOnContainerExits
  restart_all_pods="restart-all sidecar-exit"
  # watch_pod <pod>: every status the pod goes through, one line each (phase, the condition, the first
  # main container's terminated exit code, the first init container's exit code and termination
  # message), into $work/<pod>.watch; started once the pod runs.
  watch_pod() {
    "$kubectl" -n "$ns" get pod "$1" -w -o jsonpath='{.status.phase} restarting={.status.conditions[?(@.type=="AllContainersRestarting")].status} exit={.status.containerStatuses[0].state.terminated.exitCode} init0={.status.initContainerStatuses[0].state.terminated.exitCode}:{.status.initContainerStatuses[0].state.terminated.message}{"\n"}' \
      >"$work/$1.watch" 2>&1 &
    watch_pids+=($!)
    wait_until 30 test -s "$work/$1.watch" || fail "$1: no watch output"
  }
  # restarted <pod> <counts>: the restart counts (init containers, then main ones) and a main container running again
  restarted() {
    [ "$(jp "$1" '{.status.initContainerStatuses[*].restartCount} {.status.containerStatuses[*].restartCount}')" = "$2" ] &&
      [ -n "$(jp "$1" '{.status.containerStatuses[*].state.running.startedAt}')" ] &&
      [ "$(jp "$1" '{.status.conditions[?(@.type=="AllContainersRestarting")].status}')" = False ]
  }
  logs_have() { "$kubectl" -n "$ns" logs "$1" -c "$2" | grep -qF -- "$3"; }  # logs_have <pod> <container> <text>
  last_states() {  # the lastState.terminated of every container: "name:exitCode:reason ..."
    jp "$1" '{range .status.initContainerStatuses[*]}{.name}:{.lastState.terminated.exitCode}:{.lastState.terminated.reason} {end}{range .status.containerStatuses[*]}{.name}:{.lastState.terminated.exitCode}:{.lastState.terminated.reason} {end}'
  }

  cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: restart-all}
spec:
  nodeName: $node
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: release, hostPath: {path: $work/release}}
  initContainers:
  - name: init
    image: shell
    command: [/bin/sh, -c, "echo run >> /mnt/scratch/init-runs"]
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}]
  - name: sidecar
    image: python
    restartPolicy: Always
    command: [/bin/sh, -c, "echo run >> /mnt/scratch/sidecar-runs; exec python3 -m http.server 8080 --bind 0.0.0.0"]
    ports: [{name: http, containerPort: 8080}]
    startupProbe: {httpGet: {path: /, port: http}, periodSeconds: 1, failureThreshold: 60}
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}]
  containers:
  - name: main
    image: shell
    restartPolicy: Never
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: NotIn, values: [0]}}]
    command: [/bin/sh, -c]
    args:
    - |
      if [ -e /mnt/scratch/written-before ]; then
        echo "second run: init-runs=\$(wc -l < /mnt/scratch/init-runs) sidecar-runs=\$(wc -l < /mnt/scratch/sidecar-runs) file=\$(cat /mnt/scratch/written-before) eth0=\$(ip -4 -o addr show eth0 | awk '{print \$4}')"
        python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8080/", timeout=5); print("sidecar-ok")'
        while [ ! -e /release/restart-all-end ]; do sleep 0.1; done
        exit 0
      fi
      echo kept > /mnt/scratch/written-before
      echo first run
      while [ ! -e /release/restart-all-go ]; do sleep 0.1; done
      exit 3
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}, {name: release, mountPath: /release}]
YAML
  "$kubectl" -n "$ns" wait --for=condition=Ready pod/restart-all --timeout=90s >/dev/null \
    && pass "restart-all: Ready (first run)" || fail "restart-all never Ready: $(jp restart-all '{.status}')"
  uid=$(jp restart-all '{.metadata.uid}')
  ra_ip=$(jp restart-all '{.status.podIP}')
  check "restart-all: AllContainersRestarting False before" \
    "$(jp restart-all '{.status.conditions[?(@.type=="AllContainersRestarting")].status}')" False
  watch_pod restart-all
  touch "$work/release/restart-all-go"  # main exits 3
  wait_until 90 restarted restart-all "1 1 1" && pass "restart-all: every container restarted once, main running again" \
    || fail "restart-all: restart counts '$(jp restart-all '{.status.initContainerStatuses[*].restartCount} {.status.containerStatuses[*].restartCount}')'"
  check "restart-all: same UID" "$(jp restart-all '{.metadata.uid}')" "$uid"
  check "restart-all: same pod IP" "$(jp restart-all '{.status.podIP}')" "$ra_ip"
  check "restart-all: lastState of every container (the kubelet's)" "$(last_states restart-all)" \
    "init:137:RestartingAllContainers sidecar:137:RestartingAllContainers main:137:RestartingAllContainers "
  check "restart-all: Initialized stayed True" "$(jp restart-all '{.status.conditions[?(@.type=="Initialized")].status}')" True
  wait_until 30 logs_have restart-all main sidecar-ok || true
  logs=$("$kubectl" -n "$ns" logs restart-all -c main)
  contains "restart-all: init reran, sidecar restarted, emptyDir kept, same IP" "$logs" \
    "second run: init-runs=2 sidecar-runs=2 file=kept eth0=$ra_ip/24"
  contains "restart-all: the sidecar serves again before main starts" "$logs" sidecar-ok
  check "restart-all: logs --previous" "$("$kubectl" -n "$ns" logs restart-all -c main --previous)" "first run"
  seen=$(wc -l <"$work/restart-all.watch")
  contains "restart-all: the condition was set with main's exit 3 in the status" "$(cat "$work/restart-all.watch")" \
    "Running restarting=True exit=3"
  check "restart-all: never Failed or Succeeded while restarting" \
    "$(head -n "$seen" "$work/restart-all.watch" | grep -cE '^(Failed|Succeeded)' || true)" 0
  touch "$work/release/restart-all-end"  # main exits 0: no rule matches, its restartPolicy Never
  "$kubectl" -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded pod/restart-all --timeout=60s >/dev/null \
    && pass "restart-all: Succeeded once main exits 0" || fail "restart-all phase $(jp restart-all '{.status.phase}')"
  check "restart-all: condition once Succeeded" \
    "$(jp restart-all '{.status.conditions[?(@.type=="AllContainersRestarting")].status} {.status.conditions[?(@.type=="AllContainersRestarting")].reason}')" \
    "False PodCompleted"

  cat <<YAML | "$kubectl" -n "$ns" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: sidecar-exit}
spec:
  nodeName: $node
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: release, hostPath: {path: $work/release}}
  initContainers:
  - name: watcher
    image: shell
    restartPolicy: Always
    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [85]}}]
    command: [/bin/sh, -c]
    args:
    - |
      echo run >> /mnt/scratch/watcher-runs
      if [ "\$(wc -l < /mnt/scratch/watcher-runs)" -eq 1 ]; then
        while [ ! -e /release/sidecar-exit-go ]; do sleep 0.1; done
        printf 'stall seen' > /dev/termination-log
        exit 85
      fi
      while true; do sleep 0.2; done
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}, {name: release, mountPath: /release}]
  containers:
  - name: trainer
    image: shell
    command: [/bin/sh, -c, "echo run >> /mnt/scratch/trainer-runs; echo trainer-runs=\$(wc -l < /mnt/scratch/trainer-runs); while true; do sleep 0.2; done"]
    volumeMounts: [{name: scratch, mountPath: /mnt/scratch}]
YAML
  "$kubectl" -n "$ns" wait --for=condition=Ready pod/sidecar-exit --timeout=90s >/dev/null \
    && pass "sidecar-exit: Ready (first run)" || fail "sidecar-exit never Ready: $(jp sidecar-exit '{.status}')"
  uid=$(jp sidecar-exit '{.metadata.uid}')
  watch_pod sidecar-exit
  touch "$work/release/sidecar-exit-go"  # the sidecar exits 85
  wait_until 90 restarted sidecar-exit "1 1" && pass "sidecar-exit: sidecar and trainer restarted once" \
    || fail "sidecar-exit: restart counts '$(jp sidecar-exit '{.status.initContainerStatuses[*].restartCount} {.status.containerStatuses[*].restartCount}')'"
  check "sidecar-exit: same UID" "$(jp sidecar-exit '{.metadata.uid}')" "$uid"
  check "sidecar-exit: lastState of every container" "$(last_states sidecar-exit)" \
    "watcher:137:RestartingAllContainers trainer:137:RestartingAllContainers "
  wait_until 30 logs_have sidecar-exit trainer trainer-runs || true
  check "sidecar-exit: the trainer ran again beside the emptyDir" "$("$kubectl" -n "$ns" logs sidecar-exit -c trainer)" trainer-runs=2
  contains "sidecar-exit: the condition was set with the sidecar's exit 85 and its termination message" \
    "$(cat "$work/sidecar-exit.watch")" "restarting=True exit= init0=85:stall seen"
  check "sidecar-exit: the sidecar's lastState message is the kubelet's, not its own" \
    "$(jp sidecar-exit '{.status.initContainerStatuses[0].lastState.terminated.message}')" \
    "The container is removed because RestartAllContainers in place"
  check "sidecar-exit: never Failed or Succeeded" "$(grep -cE '^(Failed|Succeeded)' "$work/sidecar-exit.watch" || true)" 0
  check "sidecar-exit: phase" "$(jp sidecar-exit '{.status.phase}')" Running
fi

# shellcheck disable=SC2086 # restart_all_pods: names, split on purpose
"$kubectl" -n "$ns" delete pod ok fails killed rule-restart crashloop term-msg $restart_all_pods --timeout=120s >/dev/null \
  && pass "pods deleted" || fail "pod deletion"
check "no pods left" "$("$kubectl" -n "$ns" get pods -o name)" ""

kill -TERM "$node_pid"; wait "$node_pid" || true; node_pid=""
check "node netns removed" "$(ip netns list | grep -c "^tn-$node-" || true)" 0
ip link show "$bridge" >/dev/null 2>&1 && fail "bridge $bridge left behind" || pass "bridge $bridge removed"
check "node NotReady after stop" "$("$kubectl" get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" False

if [ "$failures" -gt 0 ]; then
  echo "---- node log"; cat "$work/node.log"; echo "$failures check(s) failed"; exit 1
fi
echo "all node checks passed"
