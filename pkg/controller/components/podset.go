package components

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// PodSet is a set of identical pods that one workload object runs: a
// Deployment's pods, or a LeaderWorkerSet's leaders or workers. The
// InferenceService and InferenceGraph resolvers and the LLM parts make
// them; the Deployment and LeaderWorkerSet builders read them, and decide
// nothing about replicas themselves.
type PodSet struct {
	// Name of the workload object (and of the objects beside it).
	Name string
	// Selector selects the pods; it never changes for the life of the
	// workload (a Deployment's selector is immutable).
	Selector map[string]string
	// Labels and Annotations go on the workload object and its pods.
	Labels      map[string]string
	Annotations map[string]string
	// Pod is the complete pod spec.
	Pod corev1.PodSpec
	// Replicas is the count the workload carries when no autoscaler sets
	// it, and an autoscaler's floor when one does. Set it with Scale.
	Replicas int32
	// Autoscaled: an autoscaler sets the replicas, so the workload object
	// carries none once it exists (the apply step hands the field over).
	Autoscaled bool
}

// Scale decides the pod set's replicas, by the one rule every owner kind
// follows: at least min, 1 when unset (0 only when asked for, to scale to
// zero); carried by the workload unless autoscaled.
func (s *PodSet) Scale(autoscaled bool, min *int32) {
	s.Autoscaled, s.Replicas = autoscaled, ptr.Deref(min, 1)
}

// SetAutoscaler sets the autoscaler class in effect for the component and
// scales its pods by it: every class but none sets the replicas, from the
// component's minReplicas up.
func (c *Component) SetAutoscaler(class v1beta1.AutoscalerClass) {
	c.AutoscalerClass = class
	c.Scale(class != v1beta1.AutoscalerNone, c.Extension.MinReplicas)
}
