package kubeingress

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// RBAC for the kinds below (controller-gen reads these free-standing markers).
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete

// IngressKind is the kind this router creates.
var IngressKind = kinds.Kind{GVK: networkingv1.SchemeGroupVersion.WithKind("Ingress"), Typed: func() client.Object { return &networkingv1.Ingress{} }}

// Router is the Kubernetes Ingress ingress.Router.
type Router struct{}

var _ ingress.Router = Router{}

// Name implements ingress.Router.
func (Router) Name() string { return "Ingress" }

// Kinds implements ingress.Router.
func (Router) Kinds() []kinds.Kind { return []kinds.Kind{IngressKind} }

// Refuse implements ingress.Router: an Ingress cannot weight its
// backends, so a spec that splits the predictor's traffic is refused.
func (Router) Refuse(p *ingress.Plan) *workload.Refusal {
	if !p.Canary {
		return nil
	}
	return &workload.Refusal{Reason: v1beta1.ReasonCanaryNotRoutable,
		Message: "the Kubernetes Ingress cannot split traffic between the predictor and its canaries; route with Gateway API (serval-config ingress.enableGatewayApi: true) or Istio (ingress.enableIstioVirtualService: true), or remove spec.canary and canaryTrafficPercent"}
}

// Objects implements ingress.Router.
func (Router) Objects(p *ingress.Plan) ([]apply.Object, error) {
	return []apply.Object{{GVK: IngressKind.GVK, Key: key(p), Spec: MakeIngress(p)}}, nil
}

func key(p *ingress.Plan) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Owner.Namespace, Name: p.Owner.Name}
}

// MakeIngress returns the Ingress of the plan: the top-level rule, then one
// rule per component host.
func MakeIngress(p *ingress.Plan) *networkingv1ac.IngressApplyConfiguration {
	rules := []*networkingv1ac.IngressRuleApplyConfiguration{rule(p.Top)}
	for _, r := range p.Components {
		rules = append(rules, rule(r))
	}
	spec := networkingv1ac.IngressSpec().WithRules(rules...)
	if p.Config.IngressClassName != "" {
		spec.WithIngressClassName(p.Config.IngressClassName)
	}
	return networkingv1ac.Ingress(p.Owner.Name, p.Owner.Namespace).
		WithLabels(p.ObjectLabels(p.Top.Component)).
		WithOwnerReferences(p.Owner.Reference()).
		WithSpec(spec)
}

func rule(r ingress.Route) *networkingv1ac.IngressRuleApplyConfiguration {
	path := "/"
	if r.PathPrefix != "" {
		path = r.PathPrefix
	}
	return networkingv1ac.IngressRule().WithHost(r.Host).WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(
		networkingv1ac.HTTPIngressPath().WithPath(path).WithPathType(networkingv1.PathTypePrefix).
			WithBackend(networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().
				WithName(r.Service).WithPort(networkingv1ac.ServiceBackendPort().WithNumber(ingress.ServicePort))))))
}

// Ready implements ingress.Router: an Ingress reports no readiness, so it is
// ready once it exists, or once it has an address when the config asks.
func (Router) Ready(ctx context.Context, c client.Reader, p *ingress.Plan, _ workload.State) (ingress.Readiness, error) {
	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, key(p), ing); err != nil {
		if apierrors.IsNotFound(err) {
			return ingress.Readiness{Reason: v1beta1.ReasonIngressNotCreated, Message: "the Ingress is not created yet"}, nil
		}
		return ingress.Readiness{}, err
	}
	return Readiness(ing, p.Config.RequireLoadBalancerAddress), nil
}

// Readiness reads a live Ingress.
func Readiness(ing *networkingv1.Ingress, requireAddress bool) ingress.Readiness {
	if requireAddress && len(ing.Status.LoadBalancer.Ingress) == 0 {
		return ingress.Readiness{Reason: v1beta1.ReasonNoLoadBalancerAddress, Message: "the Ingress has no load-balancer address yet"}
	}
	return ingress.Readiness{Ready: true, Reason: v1beta1.ReasonIngressCreated}
}
