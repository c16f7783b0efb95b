{{/* Names are cut at 63 characters: they become label values and DNS names. Every object's
name derives from "nccl-operator.fullname": fullnameOverride, else the release name when it
contains the name (nameOverride, else the chart's), else <release>-<name>. */}}
{{- define "nccl-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nccl-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "nccl-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nccl-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "nccl-operator.labels" -}}
{{ include "nccl-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: nccl-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The helm test pod's labels (templates/tests/): not the operator's selector labels, so that
the Service, the PodDisruptionBudget and the operator's NetworkPolicy never select that pod. */}}
{{- define "nccl-operator.testLabels" -}}
app.kubernetes.io/name: {{ include "nccl-operator.name" . | trunc 58 | trimSuffix "-" }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: nccl-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "nccl-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "nccl-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* One Lease per release, so two releases in one namespace never contend for one. */}}
{{- define "nccl-operator.leaseName" -}}
{{- printf "%s-leader" (include "nccl-operator.fullname" . | trunc 56 | trimSuffix "-") }}
{{- end }}

{{- define "nccl-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "nccl-operator.sidecarImage" -}}
{{- printf "%s:%s" .Values.sidecarImage.repository (default .Chart.AppVersion .Values.sidecarImage.tag) }}
{{- end }}

{{/*
What the operator does to NcclJobs and the objects it makes for them. A Role the operator
creates for a job may only grant what the operator itself holds (RBAC escalation
prevention): get/list/watch on configmaps and get/patch on pods are therefore included here.
*/}}
{{- define "nccl-operator.rules" -}}
# delete: ttlSecondsAfterFinished removes a finished job.
- apiGroups: [nccl.dev]
  resources: [nccljobs]
  verbs: [get, list, watch, update, patch, delete]
- apiGroups: [nccl.dev]
  resources: [nccljobs/status]
  verbs: [update, patch]
- apiGroups: [nccl.dev]
  resources: [nccljobs/finalizers]
  verbs: [update]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
- apiGroups: [""]
  resources: [configmaps, services, serviceaccounts]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
# Kueue (only used where the cluster serves it): one Workload per queued job, marked Finished at
# its end, deactivated while the job is suspended (patch).
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads]
  verbs: [get, list, watch, create, patch]
- apiGroups: [kueue.x-k8s.io]
  resources: [workloads/status]
  verbs: [patch]
# Native gang scheduling (Kubernetes 1.35+, only used where the cluster serves it): one Workload
# per job and, on 1.36+, one PodGroup per attempt, watched so that one deleted by hand is made
# again; delete replaces one of another shape left by a deleted job of the same name, and removes
# an earlier attempt's PodGroup.
- apiGroups: [scheduling.k8s.io]
  resources: [workloads, podgroups]
  verbs: [get, list, watch, create, patch, delete]
# NVIDIA's ComputeDomains (only used where the cluster serves them): one per job with
# spec.computeDomain, watched so that one deleted by hand is made again; patch takes over one
# left by a deleted job of the same name. The garbage collector deletes it with the job.
- apiGroups: [resource.nvidia.com]
  resources: [computedomains]
  verbs: [get, list, watch, create, patch]
{{- end }}

{{/* Cluster-scoped reads: the ResourceFlavors Kueue admits a job with (their nodeLabels and
tolerations go on the pods); the priority classes a queued job's Workload takes its priority from
(the WorkloadPriorityClass of its label, else its pods' PriorityClass, else the globalDefault one:
list). */}}
{{- define "nccl-operator.clusterReadRules" -}}
- apiGroups: [kueue.x-k8s.io]
  resources: [resourceflavors, workloadpriorityclasses]
  verbs: [get]
- apiGroups: [scheduling.k8s.io]
  resources: [priorityclasses]
  verbs: [get, list]
# failurePolicy.restartStrategy Auto: whether every node restarts pods in place (status.declaredFeatures).
- apiGroups: [""]
  resources: [nodes]
  verbs: [list, watch]
{{- if and .Values.metrics.enabled .Values.metrics.secure.enabled }}
# metrics.secure: who asks for /metrics (TokenReview), and whether they may (SubjectAccessReview).
- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
{{- end }}
{{- end }}

{{/* The operator flags extraArgs sets, as JSON {"log-level": true, ...}. */}}
{{- define "nccl-operator.extraFlags" -}}
{{- $names := dict }}
{{- range .Values.extraArgs }}
{{- $_ := set $names (regexReplaceAll "^--([^=]*).*$" . "${1}") true }}
{{- end }}
{{- toJson $names }}
{{- end }}

{{/*
Values that would render a broken install, refused with what to do instead. Included by the
Deployment; renders nothing.
*/}}
{{- define "nccl-operator.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount=%d with leaderElection.enabled=false would run %d operators that all reconcile every NcclJob at once: set leaderElection.enabled=true (extra replicas are then standbys) or replicaCount=1" (int .Values.replicaCount) (int .Values.replicaCount)) }}
{{- end }}
{{- /* The chart wires these flags to other objects (RBAC, the Lease, ports, probes). */}}
{{- $wired := dict "namespace" "watchNamespace" "leader-elect" "leaderElection.enabled" "leader-election-id" "leaderElection.enabled (the Lease is <release>-leader)" "leader-election-namespace" "leaderElection.enabled (the Lease is in the release namespace)" "metrics-bind-address" "metrics.enabled and metrics.port" "health-probe-bind-address" "healthProbePort" "metrics-secure" "metrics.secure.enabled" "metrics-cert-dir" "metrics.secure.certSecret" }}
{{- $extra := include "nccl-operator.extraFlags" . | fromJson }}
{{- range $flag, $value := $wired }}
{{- if hasKey $extra $flag }}
{{- fail (printf "extraArgs sets --%s, which the chart derives from %s and wires into its RBAC, Lease, ports or probes: set that value instead" $flag $value) }}
{{- end }}
{{- end }}
{{- end }}
