{{/* The release's full name: fullnameOverride, else the release name when it contains the chart name, else
<release>-<chart>. Every object name starts with it. */}}
{{- define "desched.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The labels of every object of a component (the argument: dict "root" $ "component" "webhook"). */}}
{{- define "desched.labels" -}}
{{ include "desched.selectorLabels" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* What a component's pods are selected by: the same pair deploy/ labels them with. */}}
{{- define "desched.selectorLabels" -}}
app.kubernetes.io/name: {{ default .root.Chart.Name .root.Values.nameOverride }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The image: repository@digest when image.digest is set, else repository:tag (tag defaults to appVersion). */}}
{{- define "desched.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The hardened pod and container security contexts of deploy/ (uid 65532, read-only root, no capabilities).
fsGroup is the webhook's alone: its key is group-readable, mode 0440. */}}
{{- define "desched.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
{{- if . }}
fsGroup: 65532
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "desched.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* imagePullSecrets of a pod spec, or nothing. */}}
{{- define "desched.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
{{- range . }}
- name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* The webhook's names: its Service, and the Secret holding its serving certificate. */}}
{{- define "desched.webhook.name" -}}
{{- printf "%s-webhook" (include "desched.fullname" .) -}}
{{- end -}}

{{- define "desched.webhook.secretName" -}}
{{- default (printf "%s-tls" (include "desched.webhook.name" .)) .Values.webhook.tls.secretName -}}
{{- end -}}

{{/* The executor's service account (also the name of its ClusterRole and bindings). */}}
{{- define "desched.executor.name" -}}
{{- printf "%s-executor" (include "desched.fullname" .) -}}
{{- end -}}
