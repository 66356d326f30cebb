package llmobjects

import (
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
)

// ScalesFromZero reports whether a part's requests are held by the
// activator while it runs no replica: the activator is installed, the
// service has no scheduler (with one, the picker is in the path) and no
// TLS (the activator speaks plain HTTP), and the part is the main
// single-node workload that KEDA scales to zero (scaling.keda with
// idleReplicaCount 0).
func (in Inputs) ScalesFromZero(p Part) bool {
	if in.Activator == "" || in.TLS || HasScheduler(in.Spec) || p.Prefill || p.MultiNode() {
		return false
	}
	s := p.Spec.Scaling
	return s != nil && s.KEDA != nil && s.KEDA.IdleReplicaCount != nil && *s.KEDA.IdleReplicaCount == 0
}

// markForActivator sets v1beta1.ComponentHeader on the route's rules whose
// backend is the workload Service, overwriting any a client sends; it
// carries the service's UID, the workload Service's owner, for the
// activator to tell it from a client's.
func markForActivator(spec *gwac.HTTPRouteSpecApplyConfiguration, namespace, svcName string, uid types.UID) {
	workload := presets.WorkloadServiceName(svcName)
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		toWorkload := false
		for _, b := range rule.BackendRefs {
			if b.Name != nil && string(*b.Name) == workload && (b.Kind == nil || *b.Kind == "Service") {
				toWorkload = true
			}
		}
		if toWorkload {
			rule.WithFilters(gwac.HTTPRouteFilter().WithType(gwapiv1.HTTPRouteFilterRequestHeaderModifier).
				WithRequestHeaderModifier(gwac.HTTPHeaderFilter().WithSet(
					gwac.HTTPHeader().WithName(gwapiv1.HTTPHeaderName(v1beta1.ComponentHeader)).WithValue(namespace + "/" + workload + "/" + string(uid)))))
		}
	}
}

// scaleFromZeroLabels are the workload Service's labels for the
// activator.
var scaleFromZeroLabels = map[string]string{v1beta1.ScaleFromZeroLabel: "true"}
