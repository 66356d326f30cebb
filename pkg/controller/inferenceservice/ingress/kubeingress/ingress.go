package kubeingress

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/owner"
)

// IngressKind is the kind this builder creates.
var IngressKind = networkingv1.SchemeGroupVersion.WithKind("Ingress")

// Builder is the Kubernetes Ingress ingress.Builder.
type Builder struct {
	Config *config.Ingress
}

// Kind implements ingress.Builder.
func (Builder) Kind() schema.GroupVersionKind { return IngressKind }

// Objects implements ingress.Builder.
func (b Builder) Objects(p *ingress.Plan) ([]apply.Object, error) {
	return []apply.Object{{GVK: IngressKind, Key: key(p), Spec: MakeIngress(p, b.Config)}}, nil
}

func key(p *ingress.Plan) types.NamespacedName {
	return types.NamespacedName{Namespace: p.ISVC.Namespace, Name: p.ISVC.Name}
}

// MakeIngress returns the Ingress of the plan: the top-level rule, then one
// rule per component host.
func MakeIngress(p *ingress.Plan, cfg *config.Ingress) *networkingv1ac.IngressApplyConfiguration {
	rules := []*networkingv1ac.IngressRuleApplyConfiguration{rule(p.Top)}
	for _, r := range p.Components {
		rules = append(rules, rule(r))
	}
	spec := networkingv1ac.IngressSpec().WithRules(rules...)
	if cfg.IngressClassName != "" {
		spec.WithIngressClassName(cfg.IngressClassName)
	}
	return networkingv1ac.Ingress(p.ISVC.Name, p.ISVC.Namespace).
		WithLabels(p.Labels).
		WithOwnerReferences(owner.Reference(p.ISVC)).
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

// Ready implements ingress.Builder.
func (b Builder) Ready(ctx context.Context, c client.Reader, p *ingress.Plan) (ingress.Readiness, error) {
	ing := &networkingv1.Ingress{}
	if err := c.Get(ctx, key(p), ing); err != nil {
		if apierrors.IsNotFound(err) {
			return ingress.Readiness{Reason: "IngressNotCreated", Message: "the Ingress is not created yet"}, nil
		}
		return ingress.Readiness{}, err
	}
	if b.Config.RequireLoadBalancerAddress && len(ing.Status.LoadBalancer.Ingress) == 0 {
		return ingress.Readiness{Reason: "NoLoadBalancerAddress", Message: "the Ingress has no load-balancer address yet"}, nil
	}
	return ingress.Readiness{Ready: true, Reason: "IngressCreated"}, nil
}
