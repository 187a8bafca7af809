{{/* The executor's pod, of every kind (deploy/executor/<kind>): `desched run` on the mounted policy, hardened;
leader-elected in a Deployment unless it is a dry run (which never elects). */}}
{{- define "desched.executor.pod" -}}
{{- $values := .Values.executor }}
{{- $kind := $values.kind }}
{{- $leaderElect := and (eq $kind "deployment") (not $values.dryRun) }}
{{- if ne $kind "deployment" }}
restartPolicy: Never
{{- else }}
terminationGracePeriodSeconds: 120
{{- end }}
priorityClassName: {{ $values.priorityClassName }}
serviceAccountName: {{ include "desched.executor.name" . }}
{{- with include "desched.imagePullSecrets" . }}{{ . | nindent 0 }}{{ end }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "desched.podSecurityContext" false | nindent 2 }}
containers:
- name: desched
  image: {{ include "desched.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
  - run
  - --policy
  - /policy/policy.yaml
  {{- if eq $kind "deployment" }}
  - --interval
  - {{ $values.deployment.interval }}
  - --metrics-bind-address
  - {{ printf "0.0.0.0:%d" (int $values.deployment.metricsPort) | quote }}
  {{- end }}
  {{- if $leaderElect }}
  - --leader-elect
  - --leader-elect-resource-namespace
  - $(POD_NAMESPACE)
  {{- end }}
  {{- if $values.dryRun }}
  - --dry-run
  {{- end }}
  {{- if $leaderElect }}
  env:
  - name: POD_NAMESPACE
    valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
  {{- end }}
  resources:
    {{- toYaml $values.resources | nindent 4 }}
  securityContext:
    {{- include "desched.containerSecurityContext" . | nindent 4 }}
  {{- if eq $kind "deployment" }}
  ports:
  - {name: metrics, containerPort: {{ $values.deployment.metricsPort }}}
  livenessProbe:
    httpGet: {path: /healthz, port: metrics, scheme: HTTPS}
    initialDelaySeconds: 5
    periodSeconds: 20
    timeoutSeconds: 5
    failureThreshold: 3
  readinessProbe:
    httpGet: {path: /healthz, port: metrics, scheme: HTTPS}
    periodSeconds: 10
    timeoutSeconds: 5
  {{- end }}
  volumeMounts:
  - {name: policy, mountPath: /policy, readOnly: true}
  {{- if eq $kind "deployment" }}
  - {name: tmp, mountPath: /tmp}
  {{- end }}
volumes:
- name: policy
  configMap: {name: {{ include "desched.fullname" . }}-policy}
{{- if eq $kind "deployment" }}
- name: tmp
  emptyDir: {medium: Memory, sizeLimit: 1Mi}
{{- end }}
{{- end }}
