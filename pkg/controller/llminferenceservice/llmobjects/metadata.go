package llmobjects

import (
	"maps"
	"strings"
)

// The prefixes of a service's own annotations and labels that KServe
// carries to its model workloads (their Deployments and LeaderWorkerSets)
// and their pod templates: a Multus network, a Kueue queue, Prometheus's
// scrape settings, and the model cache's labels (KServe's
// internal.serving.kserve.io/localmodel). Others stay on the service.
var (
	propagatedAnnotationPrefixes = []string{"k8s.v1.cni.cncf.io", "kueue.x-k8s.io", "prometheus.io", localModelPrefix}
	// A LeaderWorkerSet also takes LeaderWorkerSet's own annotations (its
	// exclusive topology, its subgroup policy).
	leaderWorkerSetAnnotationPrefixes = append([]string{"leaderworkerset.sigs.k8s.io"}, propagatedAnnotationPrefixes...)
	propagatedLabelPrefixes           = []string{"kueue.x-k8s.io", localModelPrefix}
)

// localModelPrefix is the prefix of Serval's model cache labels and
// annotations (serving.serval.dev/localmodelcache, ...).
const localModelPrefix = "serving.serval.dev/localmodel"

// prefixed are the entries of src whose keys start with one of prefixes.
func prefixed(src map[string]string, prefixes []string) map[string]string {
	out := map[string]string{}
	for k, v := range src {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
				break
			}
		}
	}
	return out
}

// overridden sets the keys of labels that the part's own labels
// (spec.labels, prefill.labels) also set to the part's values: the user's
// labels win on the pods, as in KServe, so a selector of them must select
// the user's values (two services that both set app.kubernetes.io/name to
// one value join one InferencePool).
func (p Part) overridden(labels map[string]string) map[string]string {
	for k := range labels {
		if v, ok := p.Spec.Labels[k]; ok {
			labels[k] = v
		}
	}
	return labels
}

// addServiceMetadata adds the service's propagated annotations and labels
// under the ones already there; annotationPrefixes are the pod set's
// (a LeaderWorkerSet's take LeaderWorkerSet's own).
func addServiceMetadata(labels, annotations, svcLabels, svcAnnotations map[string]string, annotationPrefixes []string) {
	for k, v := range prefixed(svcLabels, propagatedLabelPrefixes) {
		if _, set := labels[k]; !set {
			labels[k] = v
		}
	}
	for k, v := range prefixed(svcAnnotations, annotationPrefixes) {
		if _, set := annotations[k]; !set {
			annotations[k] = v
		}
	}
}

// cloneOrEmpty is m's copy, an empty map for nil.
func cloneOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
