{{/* Names and labels. */}}
{{- define "muninn.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "muninn.fullname" -}}
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

{{- define "muninn.selectorLabels" -}}
app.kubernetes.io/name: {{ include "muninn.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "muninn.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "muninn.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "muninn.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "muninn.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "muninn.secretName" -}}
{{- default (printf "%s-secrets" (include "muninn.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{- define "muninn.keyStoreClaim" -}}
{{- default (printf "%s-keys" (include "muninn.fullname" .)) .Values.keyStore.persistence.existingClaim }}
{{- end }}

{{- define "muninn.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Checks that must stop a render: the values schema cannot compare two values. */}}
{{- define "muninn.validate" -}}
{{- if gt (int .Values.projector.replicas) (int .Values.kafka.partitions) }}
{{- fail (printf "projector.replicas (%d) must not exceed kafka.partitions (%d): the projector is one consumer group, a consumer beyond the partition count gets no partition" (int .Values.projector.replicas) (int .Values.kafka.partitions)) }}
{{- end }}
{{- if and .Values.mcp.enabled (not .Values.mcp.audience) }}
{{- fail "mcp.audience is required when mcp.enabled (the bridge's public URL ending in /mcp)" }}
{{- end }}
{{- if and .Values.mcp.enabled (not .Values.mcp.exchangeUrl) }}
{{- fail "mcp.exchangeUrl is required when mcp.enabled (the IdP's RFC 8693 token endpoint)" }}
{{- end }}
{{- if and .Values.mcp.enabled (not .Values.secrets.existingSecret) (not .Values.secrets.mcpClientSecret) }}
{{- fail "secrets.mcpClientSecret (MUNINN_MCP_CLIENT_SECRET, the bridge's secret at the IdP) is required when mcp.enabled, or put it in secrets.existingSecret" }}
{{- end }}
{{- if and (gt (int .Values.projector.replicas) 1) (not .Values.keyStore.persistence.enabled) }}
{{- fail "keyStore.persistence.enabled=false leaves each pod its own MUNINN_KEY_DIR; every process must share it" }}
{{- end }}
{{- end }}

{{/*
One pod spec for every component. Input: dict "ctx" (root) "component" "args" "port" (HTTP port or 0)
"probe" ("api": /healthz + /readyz on port; "mcp": /healthz only; "metrics": /metrics on the metrics port) "values" (component
values) "shared" (mount the key-store volume) "env" (extra env list).
*/}}
{{- define "muninn.pod" -}}
{{- $ctx := .ctx }}
{{- $v := .values -}}
metadata:
  labels:
    {{- include "muninn.selectorLabels" $ctx | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  annotations:
    checksum/config: {{ include (print $ctx.Template.BasePath "/configmap.yaml") $ctx | sha256sum }}
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "muninn.serviceAccountName" $ctx }}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: {{ $ctx.Values.terminationGracePeriodSeconds }}
  {{- with $ctx.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $ctx.Values.podSecurityContext | nindent 4 }}
  containers:
    - name: {{ .component }}
      image: {{ include "muninn.image" $ctx | quote }}
      imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
      args:
        {{- toYaml .args | nindent 8 }}
      envFrom:
        - configMapRef:
            name: {{ include "muninn.fullname" $ctx }}
        - secretRef:
            name: {{ include "muninn.secretName" $ctx }}
      {{- $env := concat (.env | default list) ($v.extraEnv | default list) }}
      {{- with $env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        {{- if .port }}
        - name: http
          containerPort: {{ .port }}
          protocol: TCP
        {{- end }}
        {{- if $ctx.Values.metrics.enabled }}
        - name: metrics
          containerPort: {{ $ctx.Values.metrics.port }}
          protocol: TCP
        {{- end }}
      {{- if or (eq .probe "api") (eq .probe "mcp") }}
      startupProbe:
        httpGet: { path: /healthz, port: http }
        periodSeconds: 5
        failureThreshold: 60
      livenessProbe:
        httpGet: { path: /healthz, port: http }
        periodSeconds: 10
        timeoutSeconds: 3
      readinessProbe:
        httpGet: { path: {{ ternary "/readyz" "/healthz" (eq .probe "api") }}, port: http }
        periodSeconds: 10
        timeoutSeconds: 5
      {{- else if and (eq .probe "metrics") $ctx.Values.metrics.enabled }}
      # This role's probes are on the metrics port: /healthz (the process answers) and /readyz (projector
      # running and in its consumer group). Neither is a scrape: a scrape queries Neo4j and Kafka (lag,
      # queue depth), and an outage there must not restart the projector in a loop.
      startupProbe:
        httpGet: { path: /healthz, port: metrics }
        periodSeconds: 5
        failureThreshold: 60
      livenessProbe:
        httpGet: { path: /healthz, port: metrics }
        periodSeconds: 20
        timeoutSeconds: 5
      readinessProbe:
        httpGet: { path: /readyz, port: metrics }
        periodSeconds: 10
        timeoutSeconds: 5
      {{- end }}
      resources:
        {{- toYaml $v.resources | nindent 8 }}
      securityContext:
        {{- toYaml $ctx.Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        - name: state
          mountPath: {{ $ctx.Values.paths.state }}
        {{- if .shared }}
        - name: shared
          mountPath: {{ $ctx.Values.paths.shared }}
        {{- end }}
        {{- if $ctx.Values.neo4j.caSecret }}
        - name: neo4j-ca
          mountPath: /etc/muninn/tls/neo4j
          readOnly: true
        {{- end }}
        {{- if $ctx.Values.kafka.tls.caSecret }}
        - name: kafka-ca
          mountPath: /etc/muninn/tls/kafka
          readOnly: true
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    - name: state
      emptyDir: {}
    {{- with $ctx.Values.neo4j.caSecret }}
    - name: neo4j-ca
      secret:
        secretName: {{ . }}
        items: [{ key: ca.crt, path: ca.crt }]
    {{- end }}
    {{- with $ctx.Values.kafka.tls.caSecret }}
    - name: kafka-ca
      secret:
        secretName: {{ . }}
        items: [{ key: ca.crt, path: ca.crt }]
    {{- end }}
    {{- if .shared }}
    - name: shared
      {{- if $ctx.Values.keyStore.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ include "muninn.keyStoreClaim" $ctx }}
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
