# flow.schedule: a real kube-scheduler (its own profile, kept to this test's node, gates
# GenericWorkload and GangScheduling) on a node with room for 5 pods, 2 taken (the operator and a
# filler pod): a 4-pod job with gangScheduling Disabled binds 3 and 1 is Unschedulable; the same
# job gang scheduled (Auto: the API server serves scheduling.k8s.io Workloads) binds none while 3
# wait for the 4th; once the filler is deleted all 4 bind together and the job succeeds; deleting
# it deletes its Workload; the Workload deleted by hand while the pods wait is made again by the
# operator.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

# Room for 5 pods on the node: the operator's pod, a filler and 3 of the job's.
export FLOW_NODE_FLAGS="--max-pods 5"
sched_pid=""

scenario() {
  # kube-scheduler from the control plane's pinned module, with a profile of this test's own
  # name whose NodeAffinity keeps it to this test's node (other tests' nodes share the cluster),
  # and native gang scheduling on (-v=4: it logs each pod that waits for its gang's quorum).
  sched="flow-$ns"
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
          - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$node]}]
YAML
  "$(dirname "$kubectl")/kube-scheduler" --config "$work/scheduler.yaml" --secure-port 0 \
    --feature-gates=GenericWorkload=true,GangScheduling=true -v=4 >"$work/scheduler.log" 2>&1 &
  sched_pid=$!
  # The filler takes one place on the node until the test gives it back (bound by the bind loop).
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: filler}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleep
    image: nccl-trainer:0.1.0
    command: [/bin/sh, -c, 'trap "exit 0" TERM; while :; do sleep 1; done']
    env: [{name: PATH, value: "/usr/sbin:/usr/bin:/sbin:/bin"}]
YAML
  wait_for 60 "the filler pod runs on the node" is Running k get pod filler -o 'jsonpath={.status.phase}'
  sched_job() {  # sched_job <name> <seconds the trainers linger after the id> <gangScheduling>
    # The test control plane runs no node lifecycle controller, so the node keeps the
    # not-ready taint the API server gives every new Node.
    job_spec="  initTimeoutSeconds: 120
  gangScheduling: $3" pod_spec="      schedulerName: $sched
      tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule}]" \
      nccl_job "$1" "[/bin/sh, -c, 'exec nccl-allreduce --linger-seconds $2']"
  }
  bound() { k get pods -l "nccl.dev/job-name=$1" -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }
  bound_is() { [ "$(bound "$1")" = "$2" ]; }
  unschedulable_said() {
    k get pods -l "nccl.dev/job-name=$1" -o 'jsonpath={.items[*].status.conditions[?(@.type=="PodScheduled")].message}' | grep -q "$2"
  }
  # Pods of <job> that kube-scheduler holds at Permit until their gang is complete.
  gang_waiting() { grep 'Quorum is not met for a gang' "$work/scheduler.log" | grep -o "pod=\"$ns/$1-[0-9]*\"" | sort -u | wc -l; }
  gang_waiting_is() { [ "$(gang_waiting "$1")" = "$2" ]; }

  # Without gang scheduling: 3 of 4 pods bind and hold their places while the 4th cannot.
  # (big's trainers keep their pods: a finished pod frees its place on the node.)
  sched_job big 300 Disabled
  wait_for 60 "gangScheduling Disabled: kube-scheduler binds 3 of big's 4 pods" bound_is big 3
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said big "Too many pods"
  check "still 3 bound" "$(bound big)" 3
  check "all bound pods are on this test's node" \
    "$(k get pods -l nccl.dev/job-name=big -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort -u)" "$node"
  check "big is not Running" "$(nj big '{.status.state}')" Pending
  check "big has no gang Workload" "$(k get workloads.scheduling.k8s.io big -o name 2>/dev/null || true)" ""
  check "big's pods name no Workload" "$(k get pod big-0 -o 'jsonpath={.spec.workloadRef}')" ""
  k delete nj big --wait=true --timeout=60s >/dev/null
  wait_for 60 "big's pods are gone" is "" k get pods -l nccl.dev/job-name=big -o name

  # The same job gang scheduled: no pod binds while the 4th does not fit.
  sched_job gang 0 Auto
  wait_for 30 "gang's Workload: one pod group, minCount 4" is trainers/4 \
    k get workloads.scheduling.k8s.io gang -o 'jsonpath={.spec.podGroups[0].name}/{.spec.podGroups[0].policy.gang.minCount}'
  check "the Workload is owned by the job" \
    "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" \
    "NcclJob/gang/$(nj gang '{.metadata.uid}')"
  check "its controllerRef names the job" "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.spec.controllerRef.kind}/{.spec.controllerRef.name}')" NcclJob/gang
  wait_for 30 "gang's 4 pods exist" is 4 pods_of gang
  check "every pod names the Workload, pod group and attempt" \
    "$(k get pods -l nccl.dev/job-name=gang -o 'jsonpath={range .items[*]}{.spec.workloadRef.name}/{.spec.workloadRef.podGroup}/{.spec.workloadRef.podGroupReplicaKey}{"\n"}{end}' | sort -u)" \
    gang/trainers/attempt-1
  wait_for 60 "kube-scheduler holds 3 of gang's pods for their gang" gang_waiting_is gang 3
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said gang "Too many pods"
  check "no pod of gang is bound" "$(bound gang)" 0
  check "gang is not Running" "$(nj gang '{.status.state}')" Pending

  # The gang Workload deleted by hand (while its pods wait for it) is made again by the
  # operator, owned by the job, and the pods still wait for their whole gang.
  old_uid=$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.uid}')
  k delete workloads.scheduling.k8s.io gang --wait=true --timeout=60s >/dev/null && pass "gang's Workload deleted by hand" \
    || fail "cannot delete gang's Workload"
  gang_uid() { k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.uid}' 2>/dev/null; }
  gang_remade() { local uid; uid=$(gang_uid); [ -n "$uid" ] && [ "$uid" != "$old_uid" ]; }
  wait_for 60 "the operator makes the gang Workload again" gang_remade
  check "the new Workload is owned by the job, one pod group of minCount 4" \
    "$(k get workloads.scheduling.k8s.io gang -o 'jsonpath={.metadata.ownerReferences[0].name}/{.spec.podGroups[0].policy.gang.minCount}')" gang/4
  check "still no pod of gang is bound" "$(bound gang)" 0

  # Room for the 4th: kube-scheduler lets the whole gang through at once, then all 4 are bound.
  k delete pod filler --wait=false >/dev/null
  wait_for 60 "kube-scheduler: the gang's quorum is met, all 4 pods allowed together" sh -c \
    "grep 'Quorum is met for a gang' '$work/scheduler.log' | grep 'pod=\"$ns/gang-' | grep -q 'allowedPods=4'"
  wait_for 60 "all 4 of gang's pods are bound" bound_is gang 4
  wait_for 120 "gang Succeeds" state_is gang Succeeded
  k delete nj gang --wait=true --timeout=60s >/dev/null
  wait_for 60 "deleting the job deletes its Workload" sh -c "! '$kubectl' -n '$ns' get workloads.scheduling.k8s.io gang -o name >/dev/null 2>&1"
}

scenario_stop() {
  if [ -n "$sched_pid" ]; then kill "$sched_pid" 2>/dev/null || true; wait "$sched_pid" 2>/dev/null || true; fi
}
