package webhook

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// routeSpecPath is the field that makes Serval write an HTTPRoute of the
// user's design.
var routeSpecPath = field.NewPath("spec", "router", "route", "http", "spec")

// routeSpecOf is the HTTPRoute spec a spec asks Serval to make, or nil.
func routeSpecOf(spec *v1alpha2.LLMInferenceServiceSpec) any {
	if r := spec.Router; r != nil && r.Route != nil && r.Route.HTTP != nil && r.Route.HTTP.Spec != nil {
		return r.Route.HTTP.Spec
	}
	return nil
}

// routeRights refuses a router.route.http.spec from a requester who may
// not create HTTPRoutes in the namespace: Serval writes the route with its
// own rights, and a route of the user's design (any hostname, any header
// match) on a shared Gateway is what the cluster's RBAC gives only to those
// it trusts with HTTPRoutes. The route Serval designs itself (no spec, from
// its presets) needs no such right. An update that leaves the route spec
// as it was is not asked again, so that losing the right does not freeze
// the rest of the object. reviewer nil checks nothing (unit tests).
func routeRights(ctx context.Context, reviewer client.Client, namespace string, spec, prev *v1alpha2.LLMInferenceServiceSpec) field.ErrorList {
	want := routeSpecOf(spec)
	if reviewer == nil || want == nil || (prev != nil && apiequality.Semantic.DeepEqual(want, routeSpecOf(prev))) {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil // not an admission request: nobody to ask about
	}
	u := req.UserInfo
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: map[string]authorizationv1.ExtraValue{},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create",
			Group: "gateway.networking.k8s.io", Resource: "httproutes"},
	}}
	for k, v := range u.Extra {
		sar.Spec.Extra[k] = authorizationv1.ExtraValue(v)
	}
	if err := reviewer.Create(ctx, sar); err != nil {
		return field.ErrorList{field.InternalError(routeSpecPath, fmt.Errorf("could not ask the API server whether %s may create HTTPRoutes: %w", u.Username, err))}
	}
	if sar.Status.Allowed {
		return nil
	}
	return field.ErrorList{field.Forbidden(routeSpecPath, fmt.Sprintf(
		"Serval makes this HTTPRoute for you only if you may make it yourself, and %s may not create httproutes.gateway.networking.k8s.io in namespace %s: "+
			"leave router.route.http.spec out (Serval's own route), name your own route in router.route.http.refs, or ask for the right",
		u.Username, namespace))}
}
