# JobSet v0.12.0's InPlaceRestart on the real node, for bench/restart/run.sh (sourced after the
# node's env): its controller with the InPlaceRestart feature gate, its in-place restart agent as
# the pods' native sidecar, set up as its own example for the strategy says
# (site/static/examples/in-place-restart/jobset-sidecar-container-mode.yaml and
# service-account.yaml at the v0.12.0 tag): the agent with a RestartAllContainers rule on any exit
# but 0 and the startupProbe barrier on :8081/barrier-is-down (period 1 s), the worker with
# restartPolicy Never and the same rule, the Jobs with backoffLimit 2147483647 and
# podReplacementPolicy Failed, a ServiceAccount that may patch pods and read JobSets, and the
# ValidatingAdmissionPolicy that lets it change nothing but the attempt annotation.
#
# The controller runs on this machine, not in a pod (as bench/jobset/compare.sh runs it), with
# leader election, metrics and cert management off and its webhook server on a self-signed
# certificate; no webhook is registered with the API server, so the manifest sets what JobSet's
# defaulting webhook would (network, successPolicy, startupPolicy, completionMode Indexed,
# restartPolicy Never).
#
# The trainer: the bench's trainer image running bash, which prints "trainer started" when the
# kubelet starts it (after the barrier), then sleeps; SIGTERM ends it at once, as it ends
# nccl-allreduce. The attempt it belongs to is its pod's annotation
# jobset.sigs.k8s.io/in-place-restart-attempt, read from the API server (js_attempts): the line
# also shows the value the downward API gave the container's environment, which lagged behind the
# annotation on the pods restarted by their agent (seen on 3 of 4 pods once), so it is not used.

js_attempt_annotation=jobset.sigs.k8s.io/in-place-restart-attempt

# js_up <work dir> <images dir>: the controller running, its CRD served, the agent's image on the
# registry (js_agent_image), the ServiceAccount and policy in $ns.
js_up() {
  local work=$1 images_dir=$2 jobset_dir certs health
  jobset_dir=$("$root/bench/jobset/build.sh" | tail -1)
  js_agent_image=$("$root/bench/restart/jobset-agent-image.sh" --dir "$images_dir" | tail -1)
  kubectl apply --server-side -f "$jobset_dir/crds/" >/dev/null
  # Asked again while the just-made CRD has no status conditions (kubectl wait errs then).
  local deadline=$(( $(date +%s) + 60 ))
  until kubectl wait --for=condition=Established crd/jobsets.jobset.x-k8s.io --timeout=10s >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "the JobSet CRD is not Established after 60 s" >&2; return 1; }
    sleep 0.5
  done
  certs=$work/jobset-certs
  mkdir -p "$certs"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout "$certs/tls.key" \
    -out "$certs/tls.crt" >/dev/null 2>&1
  health=$(free_port)
  cat >"$work/jobset-config.yaml" <<YAML
apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {port: $(free_port), host: 127.0.0.1, certDir: $certs}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "127.0.0.1:$health"}
featureGates: {InPlaceRestart: true}
YAML
  # Times to the nanosecond in its log (bench/restart/timeline.py reads them).
  "$jobset_dir/jobset-manager" --config "$work/jobset-config.yaml" --zap-time-encoding=rfc3339nano \
    >"$work/jobset-manager.log" 2>&1 &
  js_pid=$!
  deadline=$(( $(date +%s) + 60 ))
  until curl -sf "http://127.0.0.1:$health/readyz" -o /dev/null; do
    kill -0 "$js_pid" 2>/dev/null || { tail -20 "$work/jobset-manager.log" >&2; echo "jobset-manager exited" >&2; return 1; }
    [ "$(date +%s)" -lt "$deadline" ] || { echo "jobset-manager not ready after 60 s ($work/jobset-manager.log)" >&2; return 1; }
    sleep 0.2
  done
  js_rbac | kubectl apply -f - >/dev/null
}

js_down() {
  [ -n "${js_pid:-}" ] || return 0
  kill "$js_pid" 2>/dev/null || true
  wait "$js_pid" 2>/dev/null || true
  js_pid=""
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# service-account.yaml of JobSet's example, in $ns.
js_rbac() {
  local sa=jobset-in-place-restart
  cat <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: $sa, namespace: $ns}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: $sa, namespace: $ns}
rules:
- {apiGroups: [""], resources: [pods], verbs: [patch]}
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $sa, namespace: $ns}
subjects: [{kind: ServiceAccount, name: $sa, namespace: $ns}]
roleRef: {kind: Role, name: $sa, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: $sa}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [pods]}]
  matchConditions:
  - {name: is-target-service-account, expression: "request.userInfo.username == 'system:serviceaccount:$ns:$sa'"}
  variables:
  - {name: oldLabels, expression: "has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"}
  - {name: newLabels, expression: "has(object.metadata.labels) ? object.metadata.labels : {}"}
  - {name: oldAnnotations, expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"}
  - {name: newAnnotations, expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"}
  validations:
  - expression: >
      oldObject.spec == object.spec && variables.oldLabels == variables.newLabels &&
      variables.oldAnnotations.all(k, k == '$js_attempt_annotation' || (k in variables.newAnnotations && variables.oldAnnotations[k] == variables.newAnnotations[k])) &&
      variables.newAnnotations.all(k, k == '$js_attempt_annotation' || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.newAnnotations[k]))
    message: "ServiceAccount $sa may only change the pod annotation $js_attempt_annotation."
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: $sa}
spec: {policyName: $sa, validationActions: [Deny]}
YAML
}

js_manifest() {  # js_manifest <name> <pods>
  local name=$1 n=$2
  cat <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: $name}
spec:
  network: {enableDNSHostnames: true, publishNotReadyAddresses: true}
  successPolicy: {operator: All}
  startupPolicy: {startupPolicyOrder: AnyOrder}
  failurePolicy: {maxRestarts: 100, restartStrategy: InPlaceRestart}
  replicatedJobs:
  - name: w
    replicas: 1
    template:
      spec:
        parallelism: $n
        completions: $n
        completionMode: Indexed
        backoffLimit: 2147483647
        podReplacementPolicy: Failed
        template:
          spec:
            restartPolicy: Never
            serviceAccountName: jobset-in-place-restart
            initContainers:
            - name: in-place-restart-agent
              image: $js_agent_image
              restartPolicy: Always
              restartPolicyRules:
              - {action: RestartAllContainers, exitCodes: {operator: NotIn, values: [0]}}
              startupProbe:
                httpGet: {path: /barrier-is-down, port: 8081}
                failureThreshold: 600
                periodSeconds: 1
              env:
              - {name: JOBSET_NAME, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"}}}
              - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            containers:
            - name: trainer
              image: $TRAINER_IMAGE
              resources: {requests: {cpu: 10m}}
              restartPolicy: Never
              restartPolicyRules:
              - {action: RestartAllContainers, exitCodes: {operator: NotIn, values: [0]}}
              env:
              - {name: IN_PLACE_RESTART_ATTEMPT, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['$js_attempt_annotation']"}}}
              command:
              - bash
              - -c
              - |
                trap 'exit 143' TERM
                echo "trainer started (environment: in-place restart attempt \$IN_PLACE_RESTART_ATTEMPT)"
                while :; do sleep 3600 & wait \$!; done
YAML
}

# Each pod's attempt annotation (written by its agent), one a line.
js_attempts() {  # js_attempts <name>
  kubectl -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$1" \
    -o jsonpath='{range .items[*]}{.metadata.annotations.jobset\.sigs\.k8s\.io/in-place-restart-attempt}{"\n"}{end}' 2>/dev/null
}

# The pod of completion index <i> of a JobSet made by js_manifest (its one Job's pods:
# <name>-w-0-<i>-<suffix>).
js_pod() {  # js_pod <name> <index>
  kubectl -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$1,batch.kubernetes.io/job-completion-index=$2" \
    -o jsonpath='{.items[0].metadata.name}'
}
