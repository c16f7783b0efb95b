# realnode.e2e, devices through Dynamic Resource Allocation: an NcclJob whose pod template claims
# one device of the node's DRA driver (Kubernetes' e2e test driver, realnode.sh) per pod, from a
# ResourceClaimTemplate, and whose trainer uses the claim:
#   - each pod gets a claim of its own, allocated by kube-scheduler from the driver's ResourceSlice
#     (status.allocation: the driver, the node's pool, a device no other pod got) and reserved
#     for that pod (status.reservedFor: its name and UID);
#   - the kubelet prepared it: the driver's CDI spec for the claim is on the node, and the trainer
#     sees the env vars it injects (the claim's own claim_<claim>_<request>=true, and the
#     template's opaque parameter as user_job=dra), through containerd's CDI;
#   - the job Succeeds, and the claims go with its pods (deleted, their CDI specs removed).
# The trainers wait for the test (a file it puts into their emptyDir on the node) so the claims
# are seen while the pods run. Sourced by realnode_test.sh after the operator is installed: uses
# check, fail, wait_until, rn_wait, TRAINER_IMAGE and D/env's REALNODE_* (DeviceClass, driver, CDI dir).

ns=rn-dra
dra_start=$(date +%s)
kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-device}
spec:
  spec:
    devices:
      requests:
        - {name: gpu, exactly: {deviceClassName: $REALNODE_DEVICE_CLASS}}
      config:
        - opaque: {driver: $REALNODE_DRA_DRIVER, parameters: {job: dra}}
---
apiVersion: nccl.dev/v1alpha1
kind: NcclJob
metadata: {name: dra}
spec:
  replicas: 2
  # One rank a pod, on the device of its claim: with claims the operator adds no
  # nvidia.com/gpu limit (this node has none), gpusPerPod only counts the ranks.
  gpusPerPod: 1
  failurePolicy: {maxRestarts: 0}
  template:
    spec:
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-device}]
      volumes: [{name: hold, emptyDir: {}}]
      containers:
        - name: trainer
          image: $TRAINER_IMAGE
          resources: {requests: {cpu: 50m}, claims: [{name: gpu}]}
          volumeMounts: [{name: hold, mountPath: /hold}]
          command: [sh, -c, 'env | grep -E "^(claim|user)_" | sort; n=0; until [ -e /hold/go ] || [ \$n -ge 1200 ]; do n=\$((n+1)); sleep 0.1; done; exec nccl-allreduce']
YAML

dra_log_has() {  # dra_log_has <pod> <line>: the trainer printed that line (within 30 s)
  local d=$(( $(date +%s) + 30 ))
  until kubectl -n "$ns" logs "$1" -c trainer 2>/dev/null | grep -qxF "$2"; do
    [ "$(date +%s)" -lt $d ] || { kubectl -n "$ns" describe pod "$1" | tail -15 >&2; return 1; }
    sleep 0.2
  done
}
claim_of() {  # claim_of <pod>: the name of the claim made for the pod from the template
  kubectl -n "$ns" get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[?(@.name=="gpu")].resourceClaimName}'
}
devices=() claims=()
for pod in dra-0 dra-1; do
  # A trainer that never ran (its claim not allocated or not prepared): nothing more to see of it.
  if ! dra_log_has "$pod" user_job=dra; then fail "dra: $pod's trainer never printed user_job=dra (the template's parameter, through CDI)"; continue; fi
  pass "dra: $pod's trainer sees the template's parameter through CDI (user_job=dra)"
  limits=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.containers[?(@.name=="trainer")].resources.limits}' || true)
  check "dra: the operator added no GPU count beside $pod's claim (trainer limits: ${limits:-none})" \
    test -z "$(grep -o 'nvidia.com/gpu' <<<"$limits" || true)"
  claim=$(claim_of "$pod" || true)
  claims+=("$claim")
  pod_uid=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.metadata.uid}' || true)
  got=$(kubectl -n "$ns" get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[*].driver}/{.status.allocation.devices.results[*].pool}/{.status.reservedFor[*].name}/{.status.reservedFor[*].uid}' || true)
  check "dra: $pod's claim $claim allocated on the node by $REALNODE_DRA_DRIVER, reserved for the pod ($got)" \
    test -n "$claim" -a "$got" = "$REALNODE_DRA_DRIVER/$REALNODE_NAME/$pod/$pod_uid"
  devices+=("$(kubectl -n "$ns" get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[*].device}' || true)")
  # The driver's env var for the claim: claim_<claim>_<request>, every other character an underscore.
  check "dra: $pod's trainer sees its own claim through CDI" dra_log_has "$pod" "$(sed 's/[^a-zA-Z0-9]/_/g' <<<"claim_${claim}_gpu")=true"
  claim_uid=$(kubectl -n "$ns" get resourceclaim "$claim" -o jsonpath='{.metadata.uid}' || true)
  check "dra: the kubelet prepared $pod's claim (the driver's CDI spec on the node)" \
    test -f "$REALNODE_CDI_DIR/$REALNODE_DRA_DRIVER-$claim_uid-gpu.json"
  touch "$REALNODE_DIR/kubelet/pods/$pod_uid/volumes/kubernetes.io~empty-dir/hold/go" || fail "dra: could not let $pod's trainer go on"
done
check "dra: each pod got a device of its own (${devices[*]})" \
  test -n "${devices[0]:-}" -a -n "${devices[1]:-}" -a "${devices[0]:-}" != "${devices[1]:-}"
check "dra: the job Succeeded" rn_wait 60 "$ns" nccljob/dra '{.status.state}' Succeeded
dra_claims_gone() {
  [ -z "$(kubectl -n "$ns" get resourceclaims -o name)" ] && [ -z "$(ls "$REALNODE_CDI_DIR")" ]
}
check "dra: the claims (${claims[*]}) went with the pods: deleted, their CDI specs removed" wait_until 30 dra_claims_gone
echo "     dra: from kubectl apply to the claims gone in $(( $(date +%s) - dra_start ))s"
