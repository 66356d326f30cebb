{{- define "serval.labels" -}}
app.kubernetes.io/name: serval
app.kubernetes.io/part-of: serval
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "serval.selector" -}}
app.kubernetes.io/name: serval
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "serval.webhookService" -}}serval-webhook-service{{- end }}

{{- /* The Secret holding the webhook serving certificate: the manager's own
(certMode self) or cert-manager's (certMode external). */ -}}
{{- define "serval.certSecret" -}}
{{- if eq .Values.webhook.certMode "external" -}}
{{- .Values.webhook.certSecret | default "serval-webhook-cert" -}}
{{- else -}}serval-webhook-certs{{- end -}}
{{- end }}

{{- /* The cert-manager Certificate whose CA cert-manager injects into the
webhook configurations (certMode external). */ -}}
{{- define "serval.certificate" -}}
{{- .Values.webhook.certManager.certificate | default "serval-webhook-cert" -}}
{{- end }}

{{- /*
serval.rules splits the rules generated from the code (files/role.yaml, make
manifests) into the document's roles:
  "own":        the Role in the manager's namespace (its certificate Secret,
                serval-config, its lease and the lease's Events);
  "cluster":    what is cluster-scoped by nature or granted by name
                (CRDs, ClusterServingRuntimes, ClusterStorageContainers, Serval's own webhook
                configurations, Knative's config-features ConfigMap, nodes,
                PersistentVolumes and the cluster-scoped model cache kinds);
  "namespaced": everything else, granted where InferenceServices are served.
*/ -}}
{{- define "serval.rules" -}}
{{- $clusterScoped := list "customresourcedefinitions" "clusterservingruntimes" "clusterstoragecontainers" "mutatingwebhookconfigurations" "validatingwebhookconfigurations" "tokenreviews" "subjectaccessreviews" "nodes" "persistentvolumes" "localmodelcaches" "localmodelcaches/status" "localmodelcaches/finalizers" "localmodelnodegroups" "localmodelnodegroups/status" "localmodelnodes" -}}
{{- $own := list -}}
{{- $cluster := list -}}
{{- $namespaced := list -}}
{{- range $doc := splitList "---" (.Files.Get "files/role.yaml") -}}
{{- $role := fromYaml $doc -}}
{{- if eq ($role.kind | default "") "Role" -}}
{{- $own = concat $own $role.rules -}}
{{- else if eq ($role.kind | default "") "ClusterRole" -}}
{{- range $rule := $role.rules -}}
{{- if $rule.resourceNames -}}
{{- $cluster = append $cluster $rule -}}
{{- else -}}
{{- $c := list -}}
{{- $n := list -}}
{{- range $r := $rule.resources -}}
{{- if has $r $clusterScoped -}}{{- $c = append $c $r -}}{{- else -}}{{- $n = append $n $r -}}{{- end -}}
{{- end -}}
{{- if $c -}}{{- $cluster = append $cluster (merge (dict "resources" $c) (omit $rule "resources")) -}}{{- end -}}
{{- if $n -}}{{- $namespaced = append $namespaced (merge (dict "resources" $n) (omit $rule "resources")) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- dict "own" $own "cluster" $cluster "namespaced" $namespaced | toYaml -}}
{{- end }}

{{/*
A policy from config/policy names Serval's accounts in the namespace
serval-system; this writes the release's namespace in its place, so that
the policy trusts (or restricts) exactly the release's accounts. It takes
(list $ $doc).
*/}}
{{- define "serval.policyAccounts" -}}
{{- $root := index . 0 -}}
{{- replace "system:serviceaccount:serval-system:" (printf "system:serviceaccount:%s:" $root.Release.Namespace) (index . 1) -}}
{{- end }}
