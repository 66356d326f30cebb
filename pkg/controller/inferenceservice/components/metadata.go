package components

import (
	"maps"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// unpropagatedAnnotations are InferenceService annotations that describe the
// InferenceService object itself and must not reach its children.
var unpropagatedAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
}

// metadataFor returns the component's labels and annotations: the runtime's,
// overridden by the InferenceService's metadata, overridden by the
// component's own; Serval's labels are set last and cannot be overridden.
func metadataFor(c *Component, isvc *v1beta1.InferenceService) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	if c.Runtime != nil {
		maps.Copy(labels, c.Runtime.Runtime.Spec.Labels)
		maps.Copy(annotations, c.Runtime.Runtime.Spec.Annotations)
	}
	maps.Copy(labels, isvc.Labels)
	maps.Copy(annotations, isvc.Annotations)
	for _, k := range unpropagatedAnnotations {
		delete(annotations, k)
	}
	maps.Copy(labels, c.Extension.Labels)
	maps.Copy(annotations, c.Extension.Annotations)
	labels[v1beta1.InferenceServiceLabel] = isvc.Name
	labels[v1beta1.ComponentLabel] = string(c.Type)
	return labels, annotations
}
