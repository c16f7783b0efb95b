# flow.kueue: Kueue (tests/harness/kueue) with quota for one job: of two queued 4-pod jobs the
# second has no pod while the first runs (and restarts), and starts whole when it ends; evicted by
# Kueue (Workload deactivated), it has no pod and releases its quota, and once reactivated runs
# attempt 2 (a disruption, not a restart) to Succeeded; the admitted ResourceFlavor's nodeLabels
# and tolerations are on the pods; suspending an admitted job deactivates its Workload and gives
# the quota back, resuming runs attempt 2; Workload priorities: from the job's
# kueue.x-k8s.io/priority-class WorkloadPriorityClass (1000) or the pods' PriorityClass (10); of
# two jobs waiting behind a running one the later, higher one is admitted first; a job whose
# WorkloadPriorityClass does not exist says so (Admitted condition PriorityClassNotFound, a
# Warning) until it is made; with Kueue's waitForPodsReady on, the Workload's PodsReady follows
# the pods (Started, WaitForRecovery while it restarts, Recovered), a running job is never evicted
# for it, and a job whose pods never get ready is evicted (PodsReadyTimeout) as a disruption.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

kueue_cq=""
# Before the operator starts: it looks for Kueue's Workloads once, at start.
scenario_before_operator() {
  kueue_cq="flow-kueue-$$"
  "$flow_root/tests/harness/kueue/kueue.sh" up --dir "$CONTROLPLANE_DIR" && pass "Kueue runs with its webhooks" \
    || { fail "Kueue did not start"; exit 1; }
}

scenario_cleanup() {
  [ -n "$kueue_cq" ] || return 0
  "$kubectl" delete clusterqueue "$kueue_cq" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete resourceflavor "$kueue_cq" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete workloadpriorityclass "$kueue_cq-high" --wait=false >/dev/null 2>&1 || true
  "$kubectl" delete priorityclass "$kueue_cq-low" --wait=false >/dev/null 2>&1 || true
  "$flow_root/tests/harness/kueue/kueue.sh" down --dir "$CONTROLPLANE_DIR" || true
}

scenario() {
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: $kueue_cq}
spec:
  nodeLabels: {ncclop.test/local-node: "true"}
  tolerations: [{key: ncclop.test/flavor, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $kueue_cq}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  resourceGroups:
  - coveredResources: [cpu, memory, ephemeral-storage]
    flavors:
    - name: $kueue_cq
      resources:
      - {name: cpu, nominalQuota: "5"}
      - {name: memory, nominalQuota: 4Gi}
      - {name: ephemeral-storage, nominalQuota: 10Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: $ns}
spec: {clusterQueue: $kueue_cq}
YAML
  # 4 pods x (1 cpu trainer + 10m sidecar): one job fits the quota of 5 cpu, two do not. Kueue
  # admits nothing that requests a resource its ClusterQueue does not cover: the sidecar asks
  # for ephemeral storage too.
  # Trainers get the id, then run until SIGUSR1 (exit 0).
  queued_job() {  # queued_job <name> [more labels, flow mapping entries]
    job_labels="{kueue.x-k8s.io/queue-name: q${2:+, $2}}" job_spec="  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 2, backoffSeconds: 1}" trainer_extra='        resources: {requests: {cpu: "1"}}' \
      nccl_job "$1" '[/bin/sh, -c, '"'"'trap "exit 0" USR1; nccl-allreduce --linger-seconds 0 || exit 1; while :; do sleep 1; done'"'"']'
  }
  state_of() { nj "$1" '{.status.state}/{.status.attempt}'; }
  # wl_cond <job> <type>: the status of that condition of the job's Kueue Workload
  wl_cond() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o "jsonpath={.status.conditions[?(@.type==\"$2\")].status}"; }
  waits_in_queue() { nj "$1" '{.status.conditions[?(@.type=="Admitted")].message}' | grep -q 'waiting for admission in queue q'; }
  state_and_pods() { echo "$(nj "$1" '{.status.state}')/$(pods_of "$1")"; }
  running_pods_of() { k get pods -l "nccl.dev/job-name=$1" --field-selector=status.phase=Running -o name | wc -l; }
  finish() {  # finish <job>: SIGUSR1 to every trainer of the current attempt
    local i; for i in 0 1 2 3; do signal "$1-$i" USR1; done
  }
  # wl_pods_ready <job>: its Workload's PodsReady condition, status/reason
  wl_pods_ready() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.status.conditions[?(@.type=="PodsReady")].status}/{.status.conditions[?(@.type=="PodsReady")].reason}'; }
  # past_pods_ready_timeout <job>: more than Kueue's waitForPodsReady timeout (20 s,
  # tests/harness/kueue) and 5 s has passed since its Workload was admitted
  past_pods_ready_timeout() {
    local since; since=$(k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].lastTransitionTime}')
    [ -n "$since" ] && [ $(( $(date +%s) - $(date -d "$since" +%s) )) -gt 25 ]
  }
  queued_job first
  wait_for 60 "first admitted and Running" nj_is first '{.status.state}/{.status.attempt}' Running/1
  # Kueue's waitForPodsReady is on: the operator says when every pod of the attempt is ready.
  wait_for 60 "first's Workload: PodsReady True (Started)" is True/Started wl_pods_ready first
  queued_job second
  wait_for 30 "second says: waiting for admission in queue q" waits_in_queue second
  check "second has no pod while first runs" "$(pods_of second)" 0
  check "second is Pending" "$(state_of second)" Pending/0
  contains "describe second: waiting for admission" "$(k describe nj second)" "waiting for admission in queue q"
  contains "first's Workload is admitted" "$(k get workloads.kueue.x-k8s.io nccljob-first -o 'jsonpath={.status.conditions[?(@.type=="Admitted")].status}')" True
  # The admitted flavor places the pods, as Kueue's own integrations do.
  check "first-0 has the flavor's nodeLabels in its nodeSelector" \
    "$(k get pod first-0 -o 'jsonpath={.spec.nodeSelector.ncclop\.test/local-node}')" true
  contains "first-0 has the flavor's toleration" "$(k get pod first-0 -o 'jsonpath={.spec.tolerations[*].key}')" ncclop.test/flavor
  # A restart of first keeps its admission: second does not overtake it.
  wait_ids first 1
  signal first-1 KILL \
    && pass "SIGKILL to first-1's trainer" || fail "debug kill refused"
  wait_for 60 "first restarted: attempt 2 Running" nj_is first '{.status.state}/{.status.attempt}' Running/2
  wait_for 60 "first's Workload: PodsReady True again (Recovered)" is True/Recovered wl_pods_ready first
  wait_for 60 "first runs past Kueue's PodsReady timeout" past_pods_ready_timeout first
  check "first's Workload is not evicted" "$(wl_cond first Evicted)" ""
  check "first: no disruption" "$(nj first '{.status.disruptions}')" 0
  check "first restarts" "$(nj first '{.status.restarts}')" 1
  check "second still has no pod after first's restart" "$(pods_of second)" 0
  wait_ids first 2
  finish first
  wait_for 60 "first Succeeded" state_is first Succeeded
  wait_for 60 "first's Workload is Finished (quota released)" is True wl_cond first Finished
  wait_for 60 "second admitted: all 4 pods Running" nj_is second '{.status.state}/{.status.attempt}' Running/1
  check "second runs whole" "$(running_pods_of second)" 4
  contains "second's events: Admitted" "$(k get events --field-selector involvedObject.name=second -o 'jsonpath={.items[*].reason}')" Admitted
  wait_ids second 1
  # Kueue evicts second (its Workload deactivated): the pods go, then the operator clears the
  # quota reservation as Kueue's job integrations do, and the job waits in the queue again.
  k patch workloads.kueue.x-k8s.io nccljob-second --type merge -p '{"spec":{"active":false}}' >/dev/null \
    && pass "second's Workload deactivated" || fail "cannot deactivate second's Workload"
  wait_for 60 "second's Workload is Evicted" is True wl_cond second Evicted
  wait_for 60 "second's quota reservation cleared (QuotaReserved False)" is False wl_cond second QuotaReserved
  check "second's Workload has no admission" "$(k get workloads.kueue.x-k8s.io nccljob-second -o 'jsonpath={.status.admission}')" ""
  check "second has no pod while evicted" "$(pods_of second)" 0
  wait_for 30 "second says: waiting for admission in queue q" waits_in_queue second
  check "second: no attempt 2 while evicted" "$(nj second '{.status.attempt}')" 1
  check "second has still no pod" "$(pods_of second)" 0
  k patch workloads.kueue.x-k8s.io nccljob-second --type merge -p '{"spec":{"active":true}}' >/dev/null \
    && pass "second's Workload reactivated" || fail "cannot reactivate second's Workload"
  wait_for 60 "second admitted again: attempt 2 Running" nj_is second '{.status.state}/{.status.attempt}' Running/2
  check "second's eviction is a disruption" "$(nj second '{.status.disruptions}')" 1
  check "second's eviction is no restart" "$(nj second '{.status.restarts}')" 0
  check "second's Workload admitted again" "$(wl_cond second Admitted)" True
  contains "second's Restarting event names Kueue's eviction" \
    "$(k get events --field-selector involvedObject.name=second,reason=Restarting -o 'jsonpath={.items[*].message}')" Deactivated
  wait_ids second 2
  finish second
  wait_for 60 "second Succeeded" state_is second Succeeded
  # Suspending an admitted job gives its admission back (the operator deactivates its Workload,
  # as a Kueue user stops a workload); resuming queues it again and runs a new attempt.
  queued_job third
  wait_for 60 "third admitted and Running" nj_is third '{.status.state}/{.status.attempt}' Running/1
  k patch nj third --type merge -p '{"spec":{"suspend":true}}' >/dev/null
  wait_for 60 "third Suspended, its pods gone" is Suspended/0 state_and_pods third
  check "third's Workload deactivated by the operator" \
    "$(k get workloads.kueue.x-k8s.io nccljob-third -o 'jsonpath={.spec.active}/{.metadata.annotations.nccl\.dev/suspended}')" false/true
  wait_for 60 "third's quota given back (QuotaReserved False)" is False wl_cond third QuotaReserved
  wait_for 30 "the ClusterQueue reserves quota for no workload" is 0 "$kubectl" get clusterqueue "$kueue_cq" -o 'jsonpath={.status.reservingWorkloads}'
  check "third's Admitted condition says so" \
    "$(nj third '{.status.conditions[?(@.type=="Admitted")].message}')" "spec.suspend is true: the admission is given back to queue q"
  k patch nj third --type merge -p '{"spec":{"suspend":false}}' >/dev/null
  wait_for 60 "third resumed: admitted again, attempt 2 Running" nj_is third '{.status.state}/{.status.attempt}' Running/2
  check "a suspension is no restart and no disruption" "$(nj third '{.status.restarts}/{.status.disruptions}')" 0/0
  check "third's Workload active again, unmarked" \
    "$(k get workloads.kueue.x-k8s.io nccljob-third -o 'jsonpath={.spec.active}/{.metadata.annotations.nccl\.dev/suspended}')" true/
  wait_ids third 2
  finish third
  wait_for 60 "third Succeeded" state_is third Succeeded
  # Priorities, as Kueue's own integrations give them: the job's kueue.x-k8s.io/priority-class
  # label names a WorkloadPriorityClass, else the pods' priorityClassName a PriorityClass. Of two
  # jobs waiting behind a running one, the later but higher one is admitted first (with both at
  # priority 0, Kueue would take the older first).
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: $kueue_cq-low}
value: 10
YAML
  queued_job hold
  wait_for 60 "hold admitted and Running" nj_is hold '{.status.state}/{.status.attempt}' Running/1
  pod_spec="      priorityClassName: $kueue_cq-low" queued_job low
  wait_for 30 "low says: waiting for admission in queue q" waits_in_queue low
  # high's WorkloadPriorityClass does not exist yet: the job says so (condition and Warning),
  # and gets its Workload once the class is made.
  queued_job high "kueue.x-k8s.io/priority-class: $kueue_cq-high"
  admitted_reason() { nj "$1" '{.status.conditions[?(@.type=="Admitted")].reason}'; }
  wait_for 30 "high's Admitted condition: PriorityClassNotFound" is PriorityClassNotFound admitted_reason high
  check "it names the missing class" \
    "$(nj high '{.status.conditions[?(@.type=="Admitted")].message}' | grep -o "WorkloadPriorityClass $kueue_cq-high (the job's label kueue.x-k8s.io/priority-class) does not exist")" \
    "WorkloadPriorityClass $kueue_cq-high (the job's label kueue.x-k8s.io/priority-class) does not exist"
  check "a Warning event says so" \
    "$(k get events --field-selector involvedObject.name=high,reason=PriorityClassNotFound -o 'jsonpath={.items[0].type}')" Warning
  check "high has no Workload" "$(k get workloads.kueue.x-k8s.io nccljob-high -o name 2>/dev/null)" ""
  cat <<YAML | "$kubectl" apply -f - >/dev/null
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: $kueue_cq-high}
value: 1000
YAML
  wait_for 30 "with the class made, high waits for admission in queue q" waits_in_queue high
  wl_priority() { k get workloads.kueue.x-k8s.io "nccljob-$1" -o 'jsonpath={.spec.priority}/{.spec.priorityClassRef.kind}/{.spec.priorityClassRef.name}'; }
  wait_for 30 "high's Workload: priority 1000 from its label's WorkloadPriorityClass" \
    is "1000/WorkloadPriorityClass/$kueue_cq-high" wl_priority high
  check "low's Workload: priority 10 from its pods' PriorityClass" "$(wl_priority low)" "10/PriorityClass/$kueue_cq-low"
  check "low has no pod while hold runs" "$(pods_of low)" 0
  check "high has no pod while hold runs" "$(pods_of high)" 0
  wait_ids hold 1
  finish hold
  wait_for 60 "hold Succeeded" state_is hold Succeeded
  wait_for 60 "high, queued after low, is admitted first: Running" nj_is high '{.status.state}/{.status.attempt}' Running/1
  check "low still has no pod" "$(pods_of low)" 0
  check "low still waits" "$(state_of low)" Pending/0
  wait_ids high 1
  finish high
  wait_for 60 "then low: Running" nj_is low '{.status.state}/{.status.attempt}' Running/1
  check "low's pods have their PriorityClass" "$(k get pod low-0 -o 'jsonpath={.spec.priorityClassName}/{.spec.priority}')" "$kueue_cq-low/10"
  wait_ids low 1
  finish low
  wait_for 60 "low Succeeded" state_is low Succeeded
  # A job whose pods never get ready (a readiness probe that always fails) is evicted by Kueue's
  # PodsReady timeout, and that eviction is a disruption of its attempt.
  trainer_extra='        resources: {requests: {cpu: "1"}}
        readinessProbe: {exec: {command: ["false"]}, periodSeconds: 1}' \
    job_labels="{kueue.x-k8s.io/queue-name: q}" job_spec="  initTimeoutSeconds: 60" \
    nccl_job unready '[/bin/sh, -c, '"'"'while :; do sleep 1; done'"'"']'
  wait_for 60 "unready admitted and Running" nj_is unready '{.status.state}/{.status.attempt}' Running/1
  wait_for 30 "unready's Workload: PodsReady False (WaitForStart)" is False/WaitForStart wl_pods_ready unready
  wait_for 60 "unready's Workload is Evicted" is True wl_cond unready Evicted
  check "by the PodsReady timeout" "$(k get workloads.kueue.x-k8s.io nccljob-unready -o 'jsonpath={.status.conditions[?(@.type=="Evicted")].reason}')" PodsReadyTimeout
  wait_for 60 "unready's eviction is a disruption" nj_is unready '{.status.disruptions}' 1
  check "and no restart" "$(nj unready '{.status.restarts}')" 0
  wait_for 60 "unready's pods are gone while it waits" is 0 pods_of unready
}
