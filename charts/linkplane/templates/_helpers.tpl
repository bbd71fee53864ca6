{{/*
Names and labels shared by every template. Per-process templates range over "linkplane.processes" and
call the component helpers with a context dict: (dict "root" $ "component" "api").
*/}}

{{/* The processes that run as Deployments; the image's first argument names the process. */}}
{{- define "linkplane.processes" -}}
api redirect worker
{{- end -}}

{{/* Processes reachable over HTTP from outside the cluster (Services with Ingress/HPA support). */}}
{{- define "linkplane.publicProcesses" -}}
api redirect
{{- end -}}

{{- define "linkplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* "<release>-<chart>", or just the release name when it already contains the chart name. */}}
{{- define "linkplane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "linkplane.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels never change after install: Deployment selectors are immutable. */}}
{{- define "linkplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "linkplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "linkplane.labels" -}}
helm.sh/chart: {{ include "linkplane.chart" . }}
{{ include "linkplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Name of one process's resources: "<fullname>-<component>" (Deployment, Service, HPA, PDB, Ingress). */}}
{{- define "linkplane.componentName" -}}
{{- printf "%s-%s" (include "linkplane.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "linkplane.componentSelectorLabels" -}}
{{ include "linkplane.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "linkplane.componentLabels" -}}
{{ include "linkplane.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "linkplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "linkplane.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag, or repository@digest when image.digest pins the exact image (the tag is then ignored). */}}
{{- define "linkplane.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding MONGODB_URI and SECRET_KEY: the user's existing one, or the chart's. */}}
{{- define "linkplane.secretName" -}}
{{- default (include "linkplane.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/*
SECRET_KEY, base64-encoded for the Secret's data. It must never change by accident: a new key stops every signed
click id from verifying, resets visitor cookies and makes sealed webhook and Stripe secrets unreadable.
  1. secrets.secretKey, when given, is the key (keep it in an encrypted values file: SOPS, sealed values...).
  2. Otherwise the key of the release's Secret already in the cluster is reused (lookup).
  3. Otherwise a key is generated, but only when helm talks to a cluster (install/upgrade): the list of the
     namespace's Secrets answers, so an empty lookup means "not created yet", and from then on rule 2 keeps it.
     A render without a cluster (helm template, Argo CD, `helm install --dry-run`) gets an empty answer from every
     lookup and cannot tell a first install from an upgrade: it refuses, saying how to create the Secret.
*/}}
{{- define "linkplane.secretKeyData" -}}
{{- if .Values.secrets.secretKey -}}
{{- .Values.secrets.secretKey | b64enc -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "linkplane.fullname" .) -}}
{{- $data := dig "data" "SECRET_KEY" "" $existing -}}
{{- if $data -}}
{{- $data -}}
{{- else if (lookup "v1" "Secret" .Release.Namespace "") -}}
{{- randAlphaNum 64 | b64enc -}}
{{- else -}}
{{- fail (include "linkplane.secretKeyMissing" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Why a render without a cluster stops, and the two ways out. */}}
{{- define "linkplane.secretKeyMissing" -}}
{{- $name := printf "%s-secrets" (include "linkplane.fullname" .) -}}
SECRET_KEY would be a new random key on every render: this render has no cluster to read the existing key from (helm template, Argo CD, --dry-run). Create the Secret once and point the chart at it:
  kubectl create secret generic {{ $name }} --namespace {{ .Release.Namespace }} \
    --from-literal=SECRET_KEY="$(openssl rand -base64 48 | tr -d '\n')" \
    --from-literal=MONGODB_URI='mongodb://user:password@mongodb:27017'
  then set secrets.existingSecret={{ $name }} (MONGODB_URI may come from externalMongodb.existingSecret instead);
or set secrets.secretKey (at least 32 characters) from an encrypted values file. See docs/chart-operations.md.
{{- end -}}

{{/* The custom-domain operator runs only when domains are on: without Domain objects it has nothing to do. */}}
{{- define "linkplane.operatorEnabled" -}}
{{- if and .Values.domains.enabled .Values.operator.enabled -}}true{{- end -}}
{{- end -}}

{{/* The operator's own ServiceAccount: it alone talks to the Kubernetes API at large. */}}
{{- define "linkplane.operatorServiceAccountName" -}}
{{- printf "%s-operator" (include "linkplane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The API's own ServiceAccount when domains are on: its token may create and delete Domain objects only. */}}
{{- define "linkplane.apiServiceAccountName" -}}
{{- printf "%s-api" (include "linkplane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "linkplane.operatorLeaseName" -}}
{{- default (printf "%s-operator" (include "linkplane.fullname" .) | trunc 63 | trimSuffix "-") .Values.operator.leaseName -}}
{{- end -}}

{{/*
topologySpreadConstraints of one component's pods (context: dict "root" $ "component" name), one constraint per
topologySpread.topologyKeys entry; nothing when topologySpread.enabled is false.
*/}}
{{- define "linkplane.topologySpread" -}}
{{- $spread := .root.Values.topologySpread -}}
{{- if $spread.enabled }}
topologySpreadConstraints:
{{- range $key := $spread.topologyKeys }}
  - maxSkew: {{ $spread.maxSkew }}
    topologyKey: {{ $key }}
    whenUnsatisfiable: {{ $spread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "linkplane.componentSelectorLabels" $ | nindent 8 }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Whether a Prometheus Operator object is rendered: "auto" follows the cluster (the kind is served), else the
boolean given. Usage: include "linkplane.monitoringEnabled" (list $ .Values.metrics.prometheusRule.enabled "PrometheusRule")
*/}}
{{- define "linkplane.monitoringEnabled" -}}
{{- $root := index . 0 -}}
{{- $enabled := index . 1 -}}
{{- $kind := index . 2 -}}
{{- if eq (toString $enabled) "auto" -}}
{{- if $root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" $kind) -}}true{{- end -}}
{{- else if $enabled -}}true{{- end -}}
{{- end -}}

{{/* The env entry of MONGODB_URI: from externalMongodb.existingSecret, else from the release's Secret. */}}
{{- define "linkplane.mongodbUriEnv" -}}
- name: MONGODB_URI
  valueFrom:
    secretKeyRef:
      {{- if .Values.externalMongodb.existingSecret }}
      name: {{ .Values.externalMongodb.existingSecret }}
      key: {{ .Values.externalMongodb.uriKey }}
      {{- else }}
      name: {{ include "linkplane.secretName" . }}
      key: MONGODB_URI
      {{- end }}
{{- end -}}

{{/* The env entry of NATS_URL when it comes from a Secret (externalNats.existingSecret); it wins over the ConfigMap. */}}
{{- define "linkplane.natsUrlEnv" -}}
{{- if .Values.externalNats.existingSecret -}}
- name: NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.externalNats.existingSecret }}
      key: {{ .Values.externalNats.urlKey }}
{{- end -}}
{{- end -}}

{{/*
The container's preStop hook: it keeps serving for preStop.sleepSeconds after the pod starts terminating, while
the endpoints controller, kube-proxy and ingress controllers stop sending it requests; only then does SIGTERM
start the process's drain. Nothing when sleepSeconds is 0.
*/}}
{{- define "linkplane.preStop" -}}
{{- $seconds := int64 .Values.preStop.sleepSeconds -}}
{{- if gt $seconds 0 }}
lifecycle:
  preStop:
    {{- if eq .Values.preStop.action "sleep" }}
    sleep:
      seconds: {{ $seconds }}
    {{- else }}
    exec:
      command: ["sleep", "{{ $seconds }}"]
    {{- end }}
{{- end }}
{{- end -}}

{{/* Labels of the `helm test` pods: not a process's, so no Service or PodDisruptionBudget selects them. */}}
{{- define "linkplane.testLabels" -}}
{{ include "linkplane.labels" . }}
app.kubernetes.io/component: test
{{- end -}}
