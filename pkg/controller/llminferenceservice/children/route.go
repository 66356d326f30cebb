package children

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/types"
	gwac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// HasManagedRoute reports whether Serval makes an HTTPRoute for the spec.
func HasManagedRoute(in Inputs) bool {
	r := in.Spec.Router
	return r != nil && r.Route != nil && r.Route.HTTP != nil && r.Route.HTTP.Spec != nil
}

// RouteObject is the managed HTTPRoute, its spec the combined one.
func RouteObject(in Inputs) (apply.Object, error) {
	svc := in.Service
	spec := &gwac.HTTPRouteSpecApplyConfiguration{}
	data, err := json.Marshal(in.Spec.Router.Route.HTTP.Spec)
	if err != nil {
		return apply.Object{}, err
	}
	if err := json.Unmarshal(data, spec); err != nil {
		return apply.Object{}, err
	}
	name := RouteName(svc.Name)
	route := gwac.HTTPRoute(name, svc.Namespace).WithLabels(commonLabels(svc, "route")).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).WithSpec(spec)
	return apply.Object{GVK: gatewayapi.HTTPRouteKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: name}, Spec: route}, nil
}
