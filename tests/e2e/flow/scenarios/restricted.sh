# flow.restricted: Pod Security "restricted" enforced on the namespace, a ResourceQuota that
# demands limits, trainers under their own ServiceAccount (an IRSA-style role annotation): the
# operator and the job's pods are admitted and the job Succeeds.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  # The operator was admitted under "baseline" (the default); now the strictest profile.
  k label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
  # Every container (the injected sidecar too) must declare these, or its pod is refused.
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ResourceQuota
metadata: {name: demands-limits}
spec:
  hard: {requests.cpu: "8", requests.memory: 8Gi, limits.cpu: "16", limits.memory: 16Gi}
YAML
  # Admission enforces a quota once the quota controller has recorded its status.
  wait_for 60 "the ResourceQuota is in force" sh -c "[ -n \"\$('$kubectl' -n '$ns' get resourcequota demands-limits -o 'jsonpath={.status.hard.limits\.cpu}')\" ]"
  cat <<YAML | k apply -f - >/dev/null
apiVersion: v1
kind: ServiceAccount
metadata:
  name: trainer
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::111122223333:role/trainer"}
---
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: strict}
spec:
  replicas: 4
  gpusPerPod: 0
  initTimeoutSeconds: 60
  failurePolicy: {maxRestarts: 0}
  template:
    spec:
      serviceAccountName: trainer
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: trainer
        image: nccl-trainer:0.1.0
        command: [nccl-allreduce]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, readOnlyRootFilesystem: true}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: "1", memory: 512Mi}
YAML
  wait_for 60 "strict Succeeded" state_is strict Succeeded
  check "no refused pod create" "$(k get events --field-selector involvedObject.name=strict,reason=PodCreateFailed -o name)" ""
  check "pods run as the template's ServiceAccount" \
    "$(k get pods -l nccl.dev/job-name=strict -o 'jsonpath={.items[*].spec.serviceAccountName}')" "trainer trainer trainer trainer"
  check "the ServiceAccount keeps its role annotation" \
    "$(k get sa trainer -o 'jsonpath={.metadata.annotations.eks\.amazonaws\.com/role-arn}')" "arn:aws:iam::111122223333:role/trainer"
  check "no per-job ServiceAccount" "$(k get sa strict-nccl -o name 2>/dev/null || true)" ""
  check "the sidecar's limits" "$(k get pod strict-0 -o 'jsonpath={.spec.initContainers[0].resources.limits.cpu}/{.spec.initContainers[0].resources.limits.memory}')" 500m/64Mi
  # The quota is real: a restricted-compliant pod without limits is refused.
  refused=$(cat <<YAML | k apply --dry-run=server -f - 2>&1 || true
apiVersion: v1
kind: Pod
metadata: {name: no-limits}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - {name: c, image: nccl-trainer:0.1.0, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
YAML
)
  contains "the quota refuses a pod without limits" "$refused" "must specify limits"
  check_ranks strict 1
  no_id_in_logs strict
}
