package gatewayapi

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwac "sigs.k8s.io/gateway-api/applyconfiguration/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/owner"
)

// HTTPRouteKind is the kind this builder creates.
var HTTPRouteKind = gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute")

// explainPath matches KServe's explain requests, which go to the explainer.
const explainPath = `^/v1/models/[\w-]+:explain$`

// Builder is the Gateway API ingress.Builder.
type Builder struct {
	Config *config.Ingress
}

// Kind implements ingress.Builder.
func (Builder) Kind() schema.GroupVersionKind { return HTTPRouteKind }

// Objects implements ingress.Builder.
func (b Builder) Objects(p *ingress.Plan) ([]apply.Object, error) {
	objs := []apply.Object{b.object(p, p.ISVC.Name, p.Top, p.ExplainerService)}
	for _, r := range p.Components {
		objs = append(objs, b.object(p, v1beta1.ChildName(p.ISVC.Name, r.Component), r, ""))
	}
	return objs, nil
}

func (b Builder) object(p *ingress.Plan, name string, r ingress.Route, explainer string) apply.Object {
	return apply.Object{GVK: HTTPRouteKind, Key: types.NamespacedName{Namespace: p.ISVC.Namespace, Name: name},
		Spec: MakeHTTPRoute(p, name, r, explainer, b.Config)}
}

// MakeHTTPRoute returns the HTTPRoute of one route of the plan.
func MakeHTTPRoute(p *ingress.Plan, name string, r ingress.Route, explainer string, cfg *config.Ingress) *gwac.HTTPRouteApplyConfiguration {
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
	if r.PathPrefix != "" {
		// The model server expects its own paths: strip the routing prefix.
		main.WithFilters(gwac.HTTPRouteFilter().WithType(gatewayv1.HTTPRouteFilterURLRewrite).
			WithURLRewrite(gwac.HTTPURLRewriteFilter().WithPath(gwac.HTTPPathModifier().
				WithType(gatewayv1.PrefixMatchHTTPPathModifier).WithReplacePrefixMatch("/"))))
	}
	rules = append(rules, main)
	return gwac.HTTPRoute(name, p.ISVC.Namespace).
		WithLabels(routeLabels(p, r)).
		WithOwnerReferences(owner.Reference(p.ISVC)).
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

func routeLabels(p *ingress.Plan, r ingress.Route) map[string]string {
	labels := map[string]string{}
	for k, v := range p.Labels {
		labels[k] = v
	}
	labels[v1beta1.ComponentLabel] = string(r.Component)
	return labels
}

// Ready implements ingress.Builder: every route has every parent Accepted
// and ResolvedRefs.
func (b Builder) Ready(ctx context.Context, c client.Reader, p *ingress.Plan) (ingress.Readiness, error) {
	objs, _ := b.Objects(p)
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
		if why := notReady(route); why != "" {
			waiting = append(waiting, o.Key.Name+": "+why)
		}
	}
	if len(waiting) > 0 {
		return ingress.Readiness{Reason: "RouteNotReady", Message: strings.Join(waiting, "; ")}, nil
	}
	return ingress.Readiness{Ready: true, Reason: "RoutesReady"}, nil
}

// notReady says why a route does not route yet, or "".
func notReady(route *gatewayv1.HTTPRoute) string {
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
