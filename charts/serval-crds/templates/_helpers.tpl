{{- define "serval-crds.labels" -}}
app.kubernetes.io/name: serval
app.kubernetes.io/part-of: serval
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
