package llmobjects

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	gwac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// HasManagedRoute reports whether Serval makes an HTTPRoute for the spec.
func HasManagedRoute(in Inputs) bool {
	r := in.Spec.Router
	return r != nil && r.Route != nil && r.Route.HTTP != nil && r.Route.HTTP.Spec != nil
}

// RouteObject is the managed HTTPRoute, its spec the combined one; in a
// routing group, the rules that reach the service's own backend split
// their traffic across the group's members instead.
func RouteObject(in Inputs) (apply.Object, error) {
	svc := in.Service
	spec := &gwac.HTTPRouteSpecApplyConfiguration{}
	desired := in.Spec.Router.Route.HTTP.Spec
	labels := commonLabels(svc, "route")
	if len(in.Group) > 0 {
		desired = desired.DeepCopy()
		splitTraffic(desired, in)
		labels[v1alpha2.RoutingGroupLabel] = in.Spec.Router.RoutingGroup()
	}
	data, err := json.Marshal(desired)
	if err != nil {
		return apply.Object{}, err
	}
	if err := json.Unmarshal(data, spec); err != nil {
		return apply.Object{}, err
	}
	if main := Parts(in.Spec)[0]; in.ScalesFromZero(main) {
		markForActivator(spec, svc.Namespace, svc.Name, svc.UID)
	}
	name := RouteName(svc.Name)
	route := gwac.HTTPRoute(name, svc.Namespace).WithLabels(labels).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).WithSpec(spec)
	return apply.Object{GVK: gatewayapi.HTTPRouteKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: name}, Spec: route}, nil
}
