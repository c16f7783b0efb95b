# flow.schedule: a real kube-scheduler (its own profile, kept to this test's node, with the gates
# of native gang scheduling of the pinned Kubernetes) on a node with room for 5 pods, 2 taken (the
# operator and a filler pod): a 4-pod job with gangScheduling Disabled binds 3 and 1 is
# Unschedulable; the same job gang scheduled (Auto: the API server serves a scheduling.k8s.io gang
# API) binds none while the 4th does not fit; once the filler is deleted all 4 bind together and the
# job succeeds; deleting it deletes its Workload (and on 1.36+ its PodGroup); the Workload deleted by
# hand while the pods wait is made again by the operator; on 1.36+ a PodGroup deleted by hand while
# its pods wait stays until they are gone and does not hold them back.
# The shapes are those of the version the control plane serves: v1alpha1 (1.35: the Workload's pod
# group, the pods' spec.workloadRef with the attempt as replica key), v1alpha2 (1.36) and v1beta1
# (1.37: the Workload's pod group template, one PodGroup per attempt, the pods' spec.schedulingGroup).
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.
# shellcheck source=../../../harness/controlplane/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../harness/controlplane/lib.sh"

# Room for 5 pods on the node: the operator's pod, a filler and 3 of the job's.
export FLOW_NODE_FLAGS="--max-pods 5"
sched_pid=""
gang_version=$(gang_api_version)

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
  # shellcheck disable=SC2046 # one flag per line
  "$(dirname "$kubectl")/kube-scheduler" --config "$work/scheduler.yaml" --secure-port 0 \
    $(gang_flags scheduler) -v=4 >"$work/scheduler.log" 2>&1 &
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
  # The gang objects in the served version.
  workloads="workloads.$gang_version.scheduling.k8s.io" podgroups="podgroups.$gang_version.scheduling.k8s.io"
  if [ "$gang_version" = v1alpha1 ]; then
    group_shape='{.spec.podGroups[0].name}/{.spec.podGroups[0].policy.gang.minCount}'
    pod_join='{range .items[*]}{.spec.workloadRef.name}/{.spec.workloadRef.podGroup}/{.spec.workloadRef.podGroupReplicaKey}{"\n"}{end}'
    pod_join_want=gang/trainers/attempt-1
  else
    group_shape='{.spec.podGroupTemplates[0].name}/{.spec.podGroupTemplates[0].schedulingPolicy.gang.minCount}'
    pod_join='{range .items[*]}{.spec.schedulingGroup.podGroupName}{"\n"}{end}'
    pod_join_want=gang-attempt-1
  fi
  workload_gone() { ! "$kubectl" -n "$ns" get "$workloads" "$1" -o name >/dev/null 2>&1; }
  # 1.35: pods of <job> that kube-scheduler holds at Permit until their gang is complete.
  gang_waiting() { grep 'Quorum is not met for a gang' "$work/scheduler.log" | grep -o "pod=\"$ns/$1-[0-9]*\"" | sort -u | wc -l; }
  gang_waiting_is() { [ "$(gang_waiting "$1")" = "$2" ]; }
  # 1.36+: the whole group is tried at once and found unschedulable (PodGroupScheduled on 1.36,
  # PodGroupInitiallyScheduled on 1.37).
  group_unschedulable() {
    k get "$podgroups" "$1" -o 'jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}{"\n"}{end}' 2>/dev/null |
      grep -Eq '^PodGroup(Initially)?Scheduled=False/Unschedulable$'
  }

  # Without gang scheduling: 3 of 4 pods bind and hold their places while the 4th cannot.
  # (big's trainers keep their pods: a finished pod frees its place on the node.)
  sched_job big 300 Disabled
  wait_for 60 "gangScheduling Disabled: kube-scheduler binds 3 of big's 4 pods" bound_is big 3
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said big "Too many pods"
  check "still 3 bound" "$(bound big)" 3
  check "all bound pods are on this test's node" \
    "$(k get pods -l nccl.dev/job-name=big -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep . | sort -u)" "$node"
  check "big is not Running" "$(nj big '{.status.state}')" Pending
  check "big has no gang Workload" "$(k get "$workloads" big -o name 2>/dev/null || true)" ""
  check "big's pods join no gang" "$(k get pod big-0 -o 'jsonpath={.spec.workloadRef}{.spec.schedulingGroup}')" ""
  k delete nj big --wait=true --timeout=60s >/dev/null
  wait_for 60 "big's pods are gone" is "" k get pods -l nccl.dev/job-name=big -o name

  # The same job gang scheduled: no pod binds while the 4th does not fit.
  sched_job gang 0 Auto
  wait_for 30 "gang's $gang_version Workload: one pod group, minCount 4" is trainers/4 k get "$workloads" gang -o "jsonpath=$group_shape"
  check "the Workload is owned by the job" \
    "$(k get "$workloads" gang -o 'jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" \
    "NcclJob/gang/$(nj gang '{.metadata.uid}')"
  check "its controllerRef names the job" "$(k get "$workloads" gang -o 'jsonpath={.spec.controllerRef.kind}/{.spec.controllerRef.name}')" NcclJob/gang
  wait_for 30 "gang's 4 pods exist" is 4 pods_of gang
  check "every pod joins the attempt's gang" "$(k get pods -l nccl.dev/job-name=gang -o "jsonpath=$pod_join" | sort -u)" "$pod_join_want"
  if [ "$gang_version" = v1alpha1 ]; then
    wait_for 60 "kube-scheduler holds 3 of gang's pods for their gang" gang_waiting_is gang 3
  else
    if [ "$gang_version" = v1alpha2 ]; then
      template_ref='{.spec.podGroupTemplateRef.workload.workloadName}/{.spec.podGroupTemplateRef.workload.podGroupTemplateName}'
    else
      template_ref='{.spec.workloadRef.workloadName}/{.spec.workloadRef.templateName}'
    fi
    check "attempt 1's PodGroup: made from the Workload's template, minCount 4, owned by the job" \
      "$(k get "$podgroups" gang-attempt-1 -o "jsonpath=$template_ref/{.spec.schedulingPolicy.gang.minCount}/{.metadata.ownerReferences[0].name}/{.metadata.labels.nccl\.dev/attempt}")" \
      gang/trainers/4/gang/1
    wait_for 60 "kube-scheduler finds the whole group unschedulable" group_unschedulable gang-attempt-1
  fi
  wait_for 60 "the 4th is Unschedulable: Too many pods" unschedulable_said gang "Too many pods"
  check "no pod of gang is bound" "$(bound gang)" 0
  check "gang is not Running" "$(nj gang '{.status.state}')" Pending

  # The gang Workload deleted by hand (while its pods wait for it) is made again by the
  # operator, owned by the job, and the pods still wait for their whole gang.
  old_uid=$(k get "$workloads" gang -o 'jsonpath={.metadata.uid}')
  k delete "$workloads" gang --wait=true --timeout=60s >/dev/null && pass "gang's Workload deleted by hand" \
    || fail "cannot delete gang's Workload"
  gang_uid() { k get "$workloads" gang -o 'jsonpath={.metadata.uid}' 2>/dev/null; }
  gang_remade() { local uid; uid=$(gang_uid); [ -n "$uid" ] && [ "$uid" != "$old_uid" ]; }
  wait_for 60 "the operator makes the gang Workload again" gang_remade
  check "the new Workload is owned by the job, one pod group of minCount 4" \
    "$(k get "$workloads" gang -o "jsonpath={.metadata.ownerReferences[0].name}/$group_shape")" gang/trainers/4
  check "still no pod of gang is bound" "$(bound gang)" 0
  if [ "$gang_version" != v1alpha1 ]; then
    # Its pods keep a PodGroup deleted by hand (the protection finalizer) until they are gone.
    k delete "$podgroups" gang-attempt-1 --wait=false >/dev/null && pass "attempt 1's PodGroup deleted by hand" \
      || fail "cannot delete attempt 1's PodGroup"
    wait_for 30 "the PodGroup stays, terminating, while its pods wait" sh -c \
      "'$kubectl' -n '$ns' get '$podgroups' gang-attempt-1 -o 'jsonpath={.metadata.deletionTimestamp}' | grep -q ."
    check "still no pod of gang is bound" "$(bound gang)" 0
  fi

  # Room for the 4th: kube-scheduler lets the whole gang through at once, then all 4 are bound.
  k delete pod filler --wait=false >/dev/null
  wait_for 60 "kube-scheduler: the gang's quorum is met, all 4 pods allowed together" sh -c \
    "grep 'Quorum is met for a gang' '$work/scheduler.log' | grep 'pod=\"$ns/gang-' | grep -q 'allowedPods=4'"
  wait_for 60 "all 4 of gang's pods are bound" bound_is gang 4
  wait_for 120 "gang Succeeds" state_is gang Succeeded
  k delete nj gang --wait=true --timeout=60s >/dev/null
  wait_for 60 "deleting the job deletes its Workload" workload_gone gang
  if [ "$gang_version" != v1alpha1 ]; then
    wait_for 60 "and its PodGroup" sh -c "! '$kubectl' -n '$ns' get '$podgroups' gang-attempt-1 -o name >/dev/null 2>&1"
  fi
}

scenario_stop() {
  if [ -n "$sched_pid" ]; then kill "$sched_pid" 2>/dev/null || true; wait "$sched_pid" 2>/dev/null || true; fi
}
