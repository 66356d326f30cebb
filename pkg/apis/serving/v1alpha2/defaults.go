package v1alpha2

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"strings"

	"k8s.io/utils/ptr"
)

// RoutingGroupLabel carries a service's routing group, so that the members
// of a group can be listed by label (KServe's serving.kserve.io/routing-group).
const RoutingGroupLabel = "serving.serval.dev/routing-group"

// StopAnnotation "true" (any case) stops an LLMInferenceService: its
// workloads and routes are removed until the annotation goes (KServe's
// serving.kserve.io/stop).
const StopAnnotation = v1beta1.StopAnnotation

// ReasonStopped is the reason of the conditions of a stopped service.
const ReasonStopped = "Stopped"

// IsStopped reports whether the stop annotation stops the service.
func IsStopped(svc *LLMInferenceService) bool {
	return strings.EqualFold(svc.Annotations[StopAnnotation], "true")
}

// Default applies KServe's defaults: the model is named after the service
// when it has no name, and the routing group, if any, is mirrored into a
// label. The webhook applies it; the reconciler applies it to a copy, so an
// object that never passed the webhook is read the same way.
func Default(svc *LLMInferenceService) {
	if svc.Spec.Model.Name == nil || *svc.Spec.Model.Name == "" {
		svc.Spec.Model.Name = ptr.To(svc.Name)
	}
	r := svc.Spec.Router
	if r != nil && r.Route != nil && r.Route.Group != nil {
		if svc.Labels == nil {
			svc.Labels = map[string]string{}
		}
		svc.Labels[RoutingGroupLabel] = *r.Route.Group
	} else {
		delete(svc.Labels, RoutingGroupLabel)
	}
}
