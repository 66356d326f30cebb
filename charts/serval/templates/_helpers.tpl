{{- define "serval.labels" -}}
app.kubernetes.io/name: serval
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
{{- define "serval.selector" -}}
app.kubernetes.io/name: serval
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
{{- define "serval.webhookService" -}}serval-webhook-service{{- end }}
