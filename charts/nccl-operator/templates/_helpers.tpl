{{/* Names are cut at 63 characters: they become label values and DNS names. */}}
{{- define "nccl-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nccl-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
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
{{- end }}
