package v1alpha2

import "k8s.io/utils/ptr"

// RoutingGroupLabel carries a service's routing group, so that the members
// of a group can be listed by label (KServe's serving.kserve.io/routing-group).
const RoutingGroupLabel = "serving.serval.dev/routing-group"

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
