// Package istio routes InferenceServices with an Istio VirtualService, as
// KServe does in Serverless mode: one VirtualService {isvc} gives the
// InferenceService its top-level host and its cluster-local host
// {isvc}.{ns}.svc.cluster.local, sends ":explain" requests to the explainer
// and everything else to the transformer (else the predictor). In Knative
// mode each route goes through the local gateway with the authority
// rewritten to the component's Knative host; in Standard mode straight to
// the component's Service. An ExternalName Service {isvc} makes the
// cluster-local host resolve to the local gateway.
package istio

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	istionetworking "istio.io/api/networking/v1alpha3"
	istiometa "istio.io/client-go/pkg/applyconfiguration/meta/v1"
	istioac "istio.io/client-go/pkg/applyconfiguration/networking/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// RBAC for the kinds below (controller-gen reads these free-standing markers).
// +kubebuilder:rbac:groups=networking.istio.io,resources=virtualservices,verbs=get;list;watch;create;update;patch;delete

// VirtualServiceKind is the kind this router creates, read as Unstructured.
var VirtualServiceKind = kinds.Kind{
	GVK:     schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
	CRD:     "virtualservices.networking.istio.io",
	Install: "install Istio or set ingress.enableIstioVirtualService to false",
	// Serval reads nothing of its status (see Ready).
	StatusSignal: kinds.NoStatus,
}

// explainPath matches KServe's explain requests, which go to the explainer;
// the routes anchor it after the path prefix, if any.
const explainPath = `/v1/models/[\w-]+:explain$`

// Router is the Istio ingress.Router.
type Router struct {
	// ViaLocalGateway sends every route through the local gateway with the
	// authority of the component's Knative host (Knative mode); otherwise
	// straight to the component's Service (Standard mode).
	ViaLocalGateway bool
}

var _ ingress.Router = Router{}

// Name implements ingress.Router.
func (Router) Name() string { return "Istio" }

// Kinds implements ingress.Router.
func (Router) Kinds() []kinds.Kind { return []kinds.Kind{VirtualServiceKind, standard.ServiceKind} }

// Refuse implements ingress.Router: every plan Serval makes can be routed
// this way.
func (Router) Refuse(*ingress.Plan) *workload.Refusal { return nil }

// Objects implements ingress.Router: the VirtualService and the ExternalName
// Service of the cluster-local host.
func (rt Router) Objects(p *ingress.Plan) ([]apply.Object, error) {
	vs, err := toUnstructured(MakeVirtualService(p, rt.ViaLocalGateway))
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: p.Owner.Namespace, Name: p.Owner.Name}
	return []apply.Object{
		{GVK: VirtualServiceKind.GVK, Key: key, Spec: client.ApplyConfigurationFromUnstructured(vs)},
		{GVK: standard.ServiceKind.GVK, Key: key, Spec: MakeLocalService(p)},
	}, nil
}

// LocalHost is the top-level cluster-local host of the plan's InferenceService.
func LocalHost(p *ingress.Plan) string {
	return ingress.ClusterHost(p.Owner.Name, p.Owner.Namespace)
}

// MakeVirtualService returns the VirtualService of the plan.
func MakeVirtualService(p *ingress.Plan, viaLocalGateway bool) *istioac.VirtualServiceApplyConfiguration {
	cfg := p.Config
	spec := &istionetworking.VirtualService{Hosts: []string{LocalHost(p)}, Gateways: []string{cfg.LocalGateway.String()}}
	if p.External {
		spec.Hosts = []string{p.Top.Host, LocalHost(p)}
		spec.Gateways = []string{cfg.IngressGateway.String(), cfg.LocalGateway.String()}
	}
	if p.Explainer != nil {
		spec.Http = append(spec.Http, routes(p, *p.Explainer, true, viaLocalGateway)...)
	}
	spec.Http = append(spec.Http, routes(p, p.Top, false, viaLocalGateway)...)
	vs := istioac.VirtualService(p.Owner.Name, p.Owner.Namespace).
		WithLabels(p.ObjectLabels(p.Top.Component)).
		WithOwnerReferences(ownerReference(p))
	vs.Spec = spec // WithSpec would copy the protobuf message, lock included
	return vs
}

// routes are the HTTP routes to one component (the explainer's only for
// explain requests): the external host through the ingress gateway and the
// cluster-local host through the local gateway. They share one route, except
// with path-based routing, where the external one strips the path first.
func routes(p *ingress.Plan, to ingress.Route, explain bool, viaLocalGateway bool) []*istionetworking.HTTPRoute {
	cfg := p.Config
	uri := func(path string) *istionetworking.StringMatch {
		if explain {
			return regex(`^` + regexp.QuoteMeta(path) + explainPath)
		}
		if path != "" {
			return &istionetworking.StringMatch{MatchType: &istionetworking.StringMatch_Prefix{Prefix: path + "/"}}
		}
		return nil
	}
	local := &istionetworking.HTTPMatchRequest{
		Authority: regex(`^` + regexp.QuoteMeta(p.Owner.Name+"."+p.Owner.Namespace) + `(\.svc(\.cluster\.local)?)?(?::\d{1,5})?$`),
		Gateways:  []string{cfg.LocalGateway.String()},
		Uri:       uri(""),
	}
	if !p.External {
		return []*istionetworking.HTTPRoute{route(to, []*istionetworking.HTTPMatchRequest{local}, "", viaLocalGateway, cfg.LocalGatewayService)}
	}
	external := &istionetworking.HTTPMatchRequest{
		Authority: regex(`^` + regexp.QuoteMeta(p.Top.Host) + `(?::\d{1,5})?$`),
		Gateways:  []string{cfg.IngressGateway.String()},
		Uri:       uri(p.Top.PathPrefix),
	}
	if p.Top.PathPrefix == "" {
		return []*istionetworking.HTTPRoute{route(to, []*istionetworking.HTTPMatchRequest{external, local}, "", viaLocalGateway, cfg.LocalGatewayService)}
	}
	// Path-based routing: the shared domain, this path, which the model
	// server does not expect, so it is stripped.
	return []*istionetworking.HTTPRoute{
		route(to, []*istionetworking.HTTPMatchRequest{external}, p.Top.PathPrefix, viaLocalGateway, cfg.LocalGatewayService),
		route(to, []*istionetworking.HTTPMatchRequest{local}, "", viaLocalGateway, cfg.LocalGatewayService),
	}
}

// route sends the matches to one component, stripping stripPath from the
// path when set.
func route(to ingress.Route, matches []*istionetworking.HTTPMatchRequest, stripPath string, viaLocalGateway bool, localGatewayService string) *istionetworking.HTTPRoute {
	dest := &istionetworking.Destination{Host: to.ClusterHost, Port: &istionetworking.PortSelector{Number: ingress.ServicePort}}
	rewrite := &istionetworking.HTTPRewrite{}
	if viaLocalGateway {
		dest.Host = localGatewayService
		rewrite.Authority = to.ClusterHost
	}
	if stripPath != "" {
		rewrite.UriRegexRewrite = &istionetworking.RegexRewrite{Match: `^` + regexp.QuoteMeta(stripPath) + `(/.*)$`, Rewrite: `\1`}
	}
	r := &istionetworking.HTTPRoute{
		Match: matches,
		Route: []*istionetworking.HTTPRouteDestination{{Destination: dest, Weight: 100}},
	}
	if len(to.Splits) > 0 {
		// The canaries' shares, the rest to the component's own Service
		// (Standard mode only: Knative splits its own revisions).
		r.Route[0].Weight = to.Remainder()
		for _, b := range to.Splits {
			r.Route = append(r.Route, &istionetworking.HTTPRouteDestination{Weight: b.Percent,
				Destination: &istionetworking.Destination{Host: b.ClusterHost, Port: &istionetworking.PortSelector{Number: ingress.ServicePort}}})
		}
	}
	if rewrite.Authority != "" || rewrite.UriRegexRewrite != nil {
		r.Rewrite = rewrite
	}
	if to.TimeoutSeconds != nil {
		r.Timeout = durationpb.New(time.Duration(*to.TimeoutSeconds) * time.Second)
	}
	return r
}

func regex(re string) *istionetworking.StringMatch {
	return &istionetworking.StringMatch{MatchType: &istionetworking.StringMatch_Regex{Regex: re}}
}

// MakeLocalService returns the ExternalName Service {isvc}, which makes the
// cluster-local host {isvc}.{ns}.svc.cluster.local resolve to the local
// gateway, where the VirtualService takes over.
func MakeLocalService(p *ingress.Plan) *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(p.Owner.Name, p.Owner.Namespace).
		WithLabels(p.ObjectLabels(p.Top.Component)).
		WithOwnerReferences(p.Owner.Reference()).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeExternalName).
			WithExternalName(p.Config.LocalGatewayService))
}

// Ready implements ingress.Router: a VirtualService reports no readiness
// (Istio's status is off by default), so it is ready once it exists. The
// addresses are the top-level hosts.
func (Router) Ready(ctx context.Context, c client.Reader, p *ingress.Plan, _ workload.State) (ingress.Readiness, error) {
	vs := VirtualServiceKind.New()
	err := c.Get(ctx, types.NamespacedName{Namespace: p.Owner.Namespace, Name: p.Owner.Name}, vs)
	if apierrors.IsNotFound(err) {
		return ingress.Readiness{Reason: v1beta1.ReasonVirtualServiceNotCreated, Message: "the VirtualService is not created yet"}, nil
	}
	if err != nil {
		return ingress.Readiness{}, err
	}
	return Readiness(p), nil
}

// Readiness is the readiness of a VirtualService that exists.
func Readiness(p *ingress.Plan) ingress.Readiness {
	local := "http://" + LocalHost(p)
	url := local
	if p.External {
		url = p.Top.URL
	}
	return ingress.Readiness{Ready: true, Reason: v1beta1.ReasonVirtualServiceCreated, URL: url, ClusterURL: local}
}

// ownerReference converts the owner reference into Istio's own apply
// configuration type.
func ownerReference(p *ingress.Plan) *istiometa.OwnerReferenceApplyConfiguration {
	ref := p.Owner
	return istiometa.OwnerReference().WithAPIVersion(ref.APIVersion).WithKind(ref.Kind).WithName(ref.Name).WithUID(ref.UID).
		WithController(true).WithBlockOwnerDeletion(true)
}

// toUnstructured turns Istio's apply configuration into the Unstructured
// form the apply step sends: Istio's apply configurations lack the accessors
// controller-runtime's typed apply needs.
func toUnstructured(ac *istioac.VirtualServiceApplyConfiguration) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("encode the VirtualService: %w", err)
	}
	u := &unstructured.Unstructured{}
	return u, json.Unmarshal(data, &u.Object)
}
