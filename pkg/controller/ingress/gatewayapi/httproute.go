package gatewayapi

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// RBAC for the kinds below (controller-gen reads these free-standing markers).
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;update;patch;delete

// HTTPRouteKind is the kind this router creates.
var HTTPRouteKind = kinds.Kind{
	GVK:     gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute"),
	CRD:     "httproutes.gateway.networking.k8s.io",
	Install: "install Gateway API or set ingress.enableGatewayApi to false",
	Typed:   func() client.Object { return &gatewayv1.HTTPRoute{} },
}

// explainPath matches KServe's explain requests, which go to the explainer.
const explainPath = `^/v1/models/[\w-]+:explain$`

// Router is the Gateway API ingress.Router: an HTTPRoute for the top-level
// host and one per component host (Gateway API sets hostnames per route).
type Router struct{}

var _ ingress.Router = Router{}

// Name implements ingress.Router.
func (Router) Name() string { return "Gateway API" }

// Kinds implements ingress.Router.
func (Router) Kinds() []kinds.Kind { return []kinds.Kind{HTTPRouteKind} }

// Refuse implements ingress.Router: every plan Serval makes can be routed
// this way.
func (Router) Refuse(*ingress.Plan) *workload.Refusal { return nil }

// Objects implements ingress.Router.
func (Router) Objects(p *ingress.Plan) ([]apply.Object, error) {
	explainer := ""
	if p.Explainer != nil {
		explainer = p.Explainer.Service
	}
	objs := []apply.Object{object(p, p.Owner.Name, p.Top, explainer)}
	for _, r := range p.Components {
		objs = append(objs, object(p, v1beta1.ChildName(p.Owner.Name, r.Component), r, ""))
	}
	return objs, nil
}

func object(p *ingress.Plan, name string, r ingress.Route, explainer string) apply.Object {
	return apply.Object{GVK: HTTPRouteKind.GVK, Key: types.NamespacedName{Namespace: p.Owner.Namespace, Name: name},
		Spec: MakeHTTPRoute(p, name, r, explainer)}
}

// MakeHTTPRoute returns the HTTPRoute of one route of the plan.
func MakeHTTPRoute(p *ingress.Plan, name string, r ingress.Route, explainer string) *gwac.HTTPRouteApplyConfiguration {
	cfg := p.Config
	parent := gwac.ParentReference().
		WithGroup(gatewayv1.GroupName).WithKind("Gateway").
		WithNamespace(gatewayv1.Namespace(cfg.Gateway.Namespace)).
		WithName(gatewayv1.ObjectName(cfg.Gateway.Name))
	if cfg.GatewaySectionName != "" {
		parent.WithSectionName(gatewayv1.SectionName(cfg.GatewaySectionName))
	}
	var rules []*gwac.HTTPRouteRuleApplyConfiguration
	if explainer != "" {
		rules = append(rules, rule(r, gatewayv1.PathMatchRegularExpression, explainPath, explainer))
	}
	prefix := "/"
	if r.PathPrefix != "" {
		prefix = r.PathPrefix
	}
	main := rule(r, gatewayv1.PathMatchPathPrefix, prefix, r.Service)
	if len(r.Splits) > 0 {
		// The canaries' shares, the rest to the route's own Service.
		main.BackendRefs = []gwac.HTTPBackendRefApplyConfiguration{*backend(r.Service, r.Remainder())}
		for _, b := range r.Splits {
			main.WithBackendRefs(backend(b.Service, b.Percent))
		}
	}
	if r.PathPrefix != "" {
		// The model server expects its own paths: strip the routing prefix.
		main.WithFilters(gwac.HTTPRouteFilter().WithType(gatewayv1.HTTPRouteFilterURLRewrite).
			WithURLRewrite(gwac.HTTPURLRewriteFilter().WithPath(gwac.HTTPPathModifier().
				WithType(gatewayv1.PrefixMatchHTTPPathModifier).WithReplacePrefixMatch("/"))))
	}
	rules = append(rules, main)
	return gwac.HTTPRoute(name, p.Owner.Namespace).
		WithLabels(p.ObjectLabels(r.Component)).
		WithOwnerReferences(p.Owner.Reference()).
		WithSpec(gwac.HTTPRouteSpec().
			WithParentRefs(parent).
			WithHostnames(gatewayv1.Hostname(r.Host)).
			WithRules(rules...))
}

func rule(r ingress.Route, match gatewayv1.PathMatchType, value, service string) *gwac.HTTPRouteRuleApplyConfiguration {
	rl := gwac.HTTPRouteRule().
		WithMatches(gwac.HTTPRouteMatch().WithPath(gwac.HTTPPathMatch().WithType(match).WithValue(value))).
		WithBackendRefs(gwac.HTTPBackendRef().WithName(gatewayv1.ObjectName(service)).WithPort(ingress.ServicePort))
	if r.TimeoutSeconds != nil {
		rl.WithTimeouts(gwac.HTTPRouteTimeouts().WithRequest(gatewayv1.Duration(fmt.Sprintf("%ds", *r.TimeoutSeconds))))
	}
	return rl
}

func backend(service string, weight int32) *gwac.HTTPBackendRefApplyConfiguration {
	return gwac.HTTPBackendRef().WithName(gatewayv1.ObjectName(service)).WithPort(ingress.ServicePort).WithWeight(weight)
}

// Ready implements ingress.Router: every route has every parent Accepted
// and ResolvedRefs.
func (rt Router) Ready(ctx context.Context, c client.Reader, p *ingress.Plan, _ workload.State) (ingress.Readiness, error) {
	objs, _ := rt.Objects(p)
	var waiting []string
	for _, o := range objs {
		route := &gatewayv1.HTTPRoute{}
		if err := c.Get(ctx, o.Key, route); err != nil {
			if apierrors.IsNotFound(err) {
				waiting = append(waiting, o.Key.Name+": not created yet")
				continue
			}
			return ingress.Readiness{}, err
		}
		if why := NotReady(route); why != "" {
			waiting = append(waiting, o.Key.Name+": "+why)
		}
	}
	if len(waiting) > 0 {
		return ingress.Readiness{Reason: v1beta1.ReasonRouteNotReady, Message: strings.Join(waiting, "; ")}, nil
	}
	return ingress.Readiness{Ready: true, Reason: v1beta1.ReasonRoutesReady}, nil
}

// NotReady says why a route does not route yet, or "".
func NotReady(route *gatewayv1.HTTPRoute) string {
	if len(route.Status.Parents) == 0 {
		return "no Gateway has accepted the route yet"
	}
	for _, parent := range route.Status.Parents {
		for _, t := range []string{string(gatewayv1.RouteConditionAccepted), string(gatewayv1.RouteConditionResolvedRefs)} {
			c := meta.FindStatusCondition(parent.Conditions, t)
			if c == nil || c.Status != metav1.ConditionTrue {
				return describe(parent.ParentRef, t, c)
			}
		}
	}
	return ""
}

func describe(ref gatewayv1.ParentReference, t string, c *metav1.Condition) string {
	gw := string(ref.Name)
	if ref.Namespace != nil {
		gw = string(*ref.Namespace) + "/" + gw
	}
	if c == nil {
		return fmt.Sprintf("Gateway %s has not reported %s", gw, t)
	}
	return fmt.Sprintf("Gateway %s: %s is %s (%s: %s)", gw, t, c.Status, c.Reason, c.Message)
}
