# flow.tas: Kueue's Topology Aware Scheduling places a job's pods in rank order. Kueue
# (tests/harness/kueue) and 8 more local nodes (testnode, one bridge each, room for one trainer
# each), labelled as one block of 2 racks of 4 nodes, a Topology of the levels block, rack and
# kubernetes.io/hostname, a ResourceFlavor naming it, and a real kube-scheduler of the test's own
# name (with native gang scheduling, as the control plane serves it):
# - an 8-pod job that requires one rack (room for 4) has no pod and says why in Kueue's words
#   (`allows to fit only 4 out of 8 pod(s)`, in its Admitted condition and kubectl describe);
# - an 8-pod job that requires the block in slices of 4 pods per rack: its Workload's pod set
#   carries the request with podIndexLabel nccl.dev/index; its pods carry what Kueue's
#   TopologyUngater finds them by (annotation kueue.x-k8s.io/workload, label kueue.x-k8s.io/podset),
#   the ungater writes each pod's node into its nodeSelector and the scheduler binds it there:
#   pods 0-3 on one rack, 4-7 on the other, all 8 Running, each rank with the id of attempt 1;
# - a SIGKILL to pod 5's trainer (restartStrategy Recreate): attempt 2's pods are gated and placed
#   again, each index on the node it had in attempt 1; SIGUSR1 ends the job (Succeeded, its
#   Workload Finished) and the one-rack job still waits, though the nodes are free.
# Outside Kueue, Kubernetes' own gang scheduling with spec.gangTopologyKey (the gang's PodGroup
# topology constraint, gate TopologyAwareWorkloadScheduling on in the harness): an 8-pod gang binds
# no pod though 8 nodes are free (no rack holds 8), a 4-pod gang runs with all 4 pods in one rack.
# Prints how long the ungater took from the pods' creation to their binding (timing lines).
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.
# shellcheck source=../../../harness/controlplane/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../harness/controlplane/lib.sh"

tas_cq="" sched_pid="" tas_pids=() tas_nodes=()
tas_block=ncclop.test/block tas_rack=ncclop.test/rack

# Before the operator starts: it looks for Kueue's Workloads once, at start.
scenario_before_operator() {
  tas_cq="flow-tas-$$"
  "$flow_root/tests/harness/kueue/kueue.sh" up --dir "$CONTROLPLANE_DIR" && pass "Kueue runs with its webhooks" \
    || { fail "Kueue did not start"; exit 1; }
}

scenario_stop() {
  if [ -n "$sched_pid" ]; then kill "$sched_pid" 2>/dev/null || true; wait "$sched_pid" 2>/dev/null || true; fi
}

scenario_cleanup() {
  local pid n
  for pid in "${tas_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${tas_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for n in "${tas_nodes[@]}"; do "$kubectl" delete node "$n" --wait=false >/dev/null 2>&1 || true; done
  [ -n "$tas_cq" ] || return 0
  "$kubectl" delete clusterqueue "$tas_cq" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete resourceflavor "$tas_cq" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete topologies.kueue.x-k8s.io "$tas_cq" --wait=false >/dev/null 2>&1 || true
  "$flow_root/tests/harness/kueue/kueue.sh" down --dir "$CONTROLPLANE_DIR" || true
}

# tas_start_nodes: 8 testnodes, node k on bridge tnt<k> and subnet 10.247.<k>.0/24, each with room
# for one trainer (1 cpu) and its sidecar; their pods reach the API server through this test's node
# (its bridge address is in the API server's certificate). Racks r0 (nodes 0-3) and r1 (4-7).
tas_start_nodes() {
  local bin k name deadline
  bin=$("$flow_root/tests/harness/node/build.sh" | tail -1)
  for k in 0 1 2 3 4 5 6 7; do
    name="$node-t$k"; tas_nodes+=("$name")
    mkdir -p "$work/tas-$k"
    "$bin" --node-name "$name" --schedule=false --port 0 --state-dir "$work/tas-$k" \
      --bridge "tnt$k" --pod-cidr "10.247.$k.0/24" --cpu 1500m --memory 4Gi --max-pods 4 \
      --apiserver-proxy=false --service-host "10.246.$index.1" --service-port 443 \
      --ca-cert "$CONTROLPLANE_DIR/pki/ca.crt" --ca-key "$CONTROLPLANE_DIR/pki/ca.key" \
      --image-map "$(flow_image_map)" --kubeconfig "$KUBECONFIG" >"$work/tas-$k.log" 2>&1 &
    tas_pids+=($!)
  done
  deadline=$(( $(date +%s) + 60 ))
  for k in 0 1 2 3 4 5 6 7; do
    until [ -f "$work/tas-$k/ready" ]; do
      if [ "$(date +%s)" -ge "$deadline" ]; then tail -20 "$work/tas-$k.log" >&2; fail "TAS node $k not ready in 60s"; exit 1; fi
      sleep 0.2
    done
    name="$node-t$k"
    # The not-ready taint the API server gives every new Node stays here: no node lifecycle controller runs.
    "$kubectl" taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
    "$kubectl" label node "$name" --overwrite "ncclop.test/tas-pool=$ns" "$tas_block=b0" "$tas_rack=r$((k / 4))" >/dev/null
  done
  "$kubectl" wait --for=condition=Ready "${tas_nodes[@]/#/node/}" --timeout=30s >/dev/null
}

scenario() {
  tas_start_nodes && pass "8 labelled nodes in 2 racks of 4 are Ready"
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: $tas_cq}
spec:
  levels: [{nodeLabel: $tas_block}, {nodeLabel: $tas_rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $tas_cq}
spec:
  nodeLabels: {ncclop.test/tas-pool: $ns}
  topologyName: $tas_cq
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $tas_cq}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  resourceGroups:
  - coveredResources: [cpu, memory, ephemeral-storage]
    flavors:
    - name: $tas_cq
      resources:
      - {name: cpu, nominalQuota: "20"}
      - {name: memory, nominalQuota: 8Gi}
      - {name: ephemeral-storage, nominalQuota: 10Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: $ns}
spec: {clusterQueue: $tas_cq}
YAML
  # kube-scheduler from the control plane's pinned module: a profile of this test's own name kept
  # to its 8 nodes, native gang scheduling on as the control plane serves it.
  local sched="flow-$ns"
  cat > "$work/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG"}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: $sched
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: ncclop.test/tas-pool, operator: In, values: [$ns]}]
YAML
  # shellcheck disable=SC2046 # one flag per line
  "$(dirname "$kubectl")/kube-scheduler" --config "$work/scheduler.yaml" --secure-port 0 \
    $(gang_flags scheduler) >"$work/scheduler.log" 2>&1 &
  sched_pid=$!

  # tas_pod_spec: the pod spec of every job here, 1 cpu a pod; trainers get the id, then run
  # until SIGUSR1 (exit 0).
  tas_pod_spec() {
    cat <<YAML
    spec:
      schedulerName: $sched
      containers:
      - name: trainer
        image: nccl-trainer:0.1.0
        command: [/bin/sh, -c, 'trap "exit 0" USR1; nccl-allreduce --linger-seconds 0 || exit 1; while :; do sleep 1; done']
        env: [{name: PATH, value: "$build/runtime:/usr/sbin:/usr/bin:/sbin:/bin"}]
        resources: {requests: {cpu: "1"}}
YAML
  }
  # tas_job <name> <template annotations, flow mapping entries>: 8 CPU pods in queue q, 1 cpu
  # each; trainers get the id, then run until SIGUSR1 (exit 0).
  tas_job() {
    cat <<YAML | k apply -f - >/dev/null
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicas: 8
  gpusPerPod: 0
  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1, restartStrategy: Recreate}
  template:
    metadata:
      annotations: {$2}
$(tas_pod_spec)
YAML
  }
  admitted_message() { nj "$1" '{.status.conditions[?(@.type=="Admitted")].message}'; }
  # node_of <pod>, rack_of <pod>: where it is bound
  node_of() { k get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
  rack_of() { "$kubectl" get node "$(node_of "$1")" -o "jsonpath={.metadata.labels.ncclop\.test/rack}"; }
  # nodes_of <job>: "<index> <node>" for every pod of the current attempt, by index
  nodes_of() {
    local i; for i in 0 1 2 3 4 5 6 7; do echo "$i $(node_of "$1-$i")"; done
  }
  attempt_pods_running() {  # attempt_pods_running <job> <attempt>: all 8 pods of that attempt Running
    [ "$(k get pods -l "nccl.dev/job-name=$1,nccl.dev/attempt=$2" --field-selector=status.phase=Running -o name | wc -l)" = 8 ]
  }
  has_id_of() { k logs "$1" -c trainer 2>/dev/null | grep -q "rank $2 of 8 pods, attempt $3, .*id obtained"; }
  # tas_signal <pod> <signal>: through the debug endpoint of the pod's node
  tas_signal() {
    local k; k=$(node_of "$1"); k=${k##*-t}
    curl -sf -X POST "http://$(cat "$work/tas-$k/debug-addr")/debug/kill?namespace=$ns&pod=$1&container=trainer&signal=$2" >/dev/null
  }
  # timing <job> <attempt>: seconds from each pod's creation to its binding (PodScheduled)
  timing() {
    k get pods -l "nccl.dev/job-name=$1,nccl.dev/attempt=$2" -o \
      'jsonpath={range .items[*]}{.metadata.creationTimestamp} {.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}{"\n"}{end}' |
      while read -r made bound; do echo $(( $(date -d "$bound" +%s) - $(date -d "$made" +%s) )); done | sort -n | tr '\n' ' '
  }

  # One rack has room for 4 pods: a job that requires one rack for 8 waits, in Kueue's words.
  tas_job onerack "kueue.x-k8s.io/podset-required-topology: $tas_rack"
  wait_for 60 "onerack says: waiting for admission in queue q" sh -c \
    "'$kubectl' -n '$ns' get nj onerack -o 'jsonpath={.status.conditions[?(@.type==\"Admitted\")].message}' | grep -q 'waiting for admission in queue q'"
  wait_for 60 "onerack says why: Kueue's topology does not fit 8 pods in a rack" sh -c \
    "'$kubectl' -n '$ns' get nj onerack -o 'jsonpath={.status.conditions[?(@.type==\"Admitted\")].message}' | grep -q 'allows to fit only 4 out of 8 pod(s)'"
  contains "describe onerack: Kueue's reason" "$(k describe nj onerack)" "allows to fit only 4 out of 8 pod(s)"
  check "onerack has no pod" "$(pods_of onerack)" 0
  check "onerack is Pending" "$(nj onerack '{.status.state}')" Pending

  # Slices of 4 consecutive pods, each in one rack, all in one block.
  tas_job racks "kueue.x-k8s.io/podset-required-topology: $tas_block, kueue.x-k8s.io/podset-slice-required-topology: $tas_rack, kueue.x-k8s.io/podset-slice-size: \"4\""
  wait_for 60 "racks' Workload is made" k get workloads.kueue.x-k8s.io nccljob-racks
  check "racks' Workload pod set asks for the topology, pods ordered by nccl.dev/index" \
    "$(k get workloads.kueue.x-k8s.io nccljob-racks -o 'jsonpath={.spec.podSets[0].topologyRequest.required}/{.spec.podSets[0].topologyRequest.podSetSliceRequiredTopology}/{.spec.podSets[0].topologyRequest.podSetSliceSize}/{.spec.podSets[0].topologyRequest.podIndexLabel}')" \
    "$tas_block/$tas_rack/4/nccl.dev/index"
  wait_for 90 "racks admitted with a topology: all 8 pods Running" attempt_pods_running racks 1
  wait_for 30 "racks is Running" state_is racks Running
  check "racks' admission has a topology assignment" \
    "$(k get workloads.kueue.x-k8s.io nccljob-racks -o 'jsonpath={.status.admission.podSetAssignments[0].topologyAssignment.levels}')" \
    '["kubernetes.io/hostname"]'
  check "racks-0 carries what the ungater finds it by" \
    "$(k get pod racks-0 -o 'jsonpath={.metadata.annotations.kueue\.x-k8s\.io/workload}/{.metadata.labels.kueue\.x-k8s\.io/podset}')" \
    nccljob-racks/trainers
  check "no pod keeps the topology gate" "$(k get pods -l nccl.dev/job-name=racks -o 'jsonpath={.items[*].spec.schedulingGates}')" ""
  local i racks_of="" node_sel
  for i in 0 1 2 3 4 5 6 7; do
    node_sel=$(k get pod "racks-$i" -o 'jsonpath={.spec.nodeSelector.kubernetes\.io/hostname}')
    [ -n "$node_sel" ] && [ "$node_sel" = "$(node_of "racks-$i")" ] || fail "racks-$i: the ungater's nodeSelector '$node_sel', bound to '$(node_of "racks-$i")'"
    racks_of="$racks_of$(rack_of "racks-$i") "
  done
  pass "each pod is bound to the node the ungater wrote into its nodeSelector"
  echo "racks of pods 0-7: $racks_of"
  case "$racks_of" in
    "r0 r0 r0 r0 r1 r1 r1 r1 " | "r1 r1 r1 r1 r0 r0 r0 r0 ") pass "pods 0-3 share one rack, pods 4-7 the other" ;;
    *) fail "pods by rack: $racks_of" ;;
  esac
  check "one pod a node" "$(k get pods -l nccl.dev/job-name=racks -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)" 8
  for i in 0 1 2 3 4 5 6 7; do wait_for 60 "racks-$i: rank $i has the id of attempt 1" has_id_of "racks-$i" "$i" 1; done
  echo "timing racks attempt 1: pod created -> bound, s, sorted: $(timing racks 1)"
  check "onerack still has no pod" "$(pods_of onerack)" 0

  # A restart by recreation: the new pods are gated again and each index goes where it was.
  local before; before=$(nodes_of racks)
  tas_signal racks-5 KILL && pass "SIGKILL to racks-5's trainer" || fail "debug kill refused"
  wait_for 90 "racks restarted: attempt 2's 8 pods Running" attempt_pods_running racks 2
  check "each index on its node of attempt 1" "$(nodes_of racks)" "$before"
  for i in 0 1 2 3 4 5 6 7; do wait_for 60 "racks-$i: rank $i has the id of attempt 2" has_id_of "racks-$i" "$i" 2; done
  echo "timing racks attempt 2: pod created -> bound, s, sorted: $(timing racks 2)"
  check "racks restarts" "$(nj racks '{.status.restarts}')" 1
  for i in 0 1 2 3 4 5 6 7; do tas_signal "racks-$i" USR1 || fail "USR1 to racks-$i"; done
  wait_for 60 "racks Succeeded" state_is racks Succeeded
  wait_for 60 "racks' Workload is Finished" is True \
    k get workloads.kueue.x-k8s.io nccljob-racks -o 'jsonpath={.status.conditions[?(@.type=="Finished")].status}'
  contains "onerack still waits, though the nodes are free" "$(admitted_message onerack)" "allows to fit only 4 out of 8 pod(s)"
  check "onerack still has no pod" "$(pods_of onerack)" 0
  k delete nj racks onerack --wait=true --timeout=60s >/dev/null
  wait_for 60 "the jobs' pods are gone" is "" k get pods -l nccl.dev/job-name -o name

  # Outside Kueue, Kubernetes' own gang scheduling: spec.gangTopologyKey puts every pod of an
  # attempt in one rack (the PodGroup's topology constraint; gate TopologyAwareWorkloadScheduling).
  local podgroups; podgroups="podgroups.$(gang_api_version).scheduling.k8s.io"
  gang_job() {  # gang_job <name> <replicas>
    cat <<YAML | k apply -f - >/dev/null
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: $1}
spec:
  replicas: $2
  gpusPerPod: 0
  initTimeoutSeconds: 120
  gangTopologyKey: $tas_rack
  template:
$(tas_pod_spec)
YAML
  }
  bound_of() { k get pods -l "nccl.dev/job-name=$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
  group_unschedulable() {
    k get "$podgroups" "$1" -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}{"\n"}{end}' 2>/dev/null |
      grep -Eq '^PodGroup(Initially)?Scheduled=False/Unschedulable$'
  }
  # 1.35 serves no PodGroups: the job is refused, saying what it needs, and makes no pod.
  if [ "$(kube_minor)" -le 35 ]; then
    gang_job widegang 8
    wait_for 30 "widegang fails: PodGroups not served on 1.35" sh -c \
      "'$kubectl' -n '$ns' get nj widegang -o 'jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}/{.status.conditions[?(@.type==\"Failed\")].message}' | grep -q '^InvalidSpec/.*gangTopologyKey needs Kubernetes. PodGroups'"
    check "widegang has no pod" "$(pods_of widegang)" 0
    k delete nj widegang --wait=true --timeout=60s >/dev/null
    return 0
  fi
  # 8 free nodes, but no rack holds 8: the gang binds none.
  gang_job widegang 8
  wait_for 30 "widegang's PodGroup keeps the topology constraint" is "$tas_rack" \
    k get "$podgroups" widegang-attempt-1 -o 'jsonpath={.spec.schedulingConstraints.topology[0].key}'
  wait_for 60 "kube-scheduler finds widegang unschedulable in any one rack" group_unschedulable widegang-attempt-1
  check "no pod of widegang is bound, though 8 nodes are free" "$(bound_of widegang)" 0
  # 4 pods: all in one rack, the whole attempt Running.
  gang_job rackgang 4
  wait_for 60 "rackgang's 4 pods Running" is 4 sh -c \
    "'$kubectl' -n '$ns' get pods -l nccl.dev/job-name=rackgang --field-selector=status.phase=Running -o name | wc -l"
  racks_of=""
  for i in 0 1 2 3; do racks_of="$racks_of$(rack_of "rackgang-$i") "; done
  echo "racks of rackgang's pods 0-3: $racks_of"
  case "$racks_of" in "r0 r0 r0 r0 " | "r1 r1 r1 r1 ") pass "rackgang's 4 pods share one rack" ;; *) fail "rackgang by rack: $racks_of" ;; esac
  check "still no pod of widegang is bound" "$(bound_of widegang)" 0
  k delete nj widegang rackgang --wait=true --timeout=60s >/dev/null
  wait_for 60 "the gang jobs' pods are gone" is "" k get pods -l nccl.dev/job-name -o name
}
