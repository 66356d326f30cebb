package ingress_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/ingress/knativeroute"
	"github.com/serval-dev/serval/pkg/controller/ingress/kubeingress"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// TestRouterReadiness: how each router reads its routes.
func TestRouterReadiness(t *testing.T) {
	withAddress := &networkingv1.Ingress{Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
		Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}}}}}
	tests := []struct {
		name string
		got  ingress.Readiness
		want ingress.Readiness
	}{
		{"Ingress exists", kubeingress.Readiness(&networkingv1.Ingress{}, false), ingress.Readiness{Ready: true, Reason: "IngressCreated"}},
		{"Ingress without the address it must wait for", kubeingress.Readiness(&networkingv1.Ingress{}, true),
			ingress.Readiness{Reason: "NoLoadBalancerAddress", Message: "the Ingress has no load-balancer address yet"}},
		{"Ingress with its address", kubeingress.Readiness(withAddress, true), ingress.Readiness{Ready: true, Reason: "IngressCreated"}},
		{"Knative without a URL", knativeroute.Readiness(workload.State{}),
			ingress.Readiness{Reason: "WaitingForKnativeRoute", Message: "the Knative Service has no URL yet"}},
		{"Knative's URL is the InferenceService's", knativeroute.Readiness(workload.State{URL: "http://kn.example.com"}),
			ingress.Readiness{Ready: true, Reason: "KnativeRoutes", URL: "http://kn.example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
}

func TestHTTPRouteNotReady(t *testing.T) {
	ns := gatewayv1.Namespace("gateways")
	parent := func(conds ...metav1.Condition) gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{ParentRef: gatewayv1.ParentReference{Name: "public", Namespace: &ns}, Conditions: conds}
	}
	accepted := metav1.Condition{Type: "Accepted", Status: metav1.ConditionTrue}
	resolved := metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionTrue}
	refused := metav1.Condition{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "BackendNotFound", Message: "no Service iris-predictor"}
	tests := []struct {
		name    string
		parents []gatewayv1.RouteParentStatus
		want    string
	}{
		{"no parent yet", nil, "no Gateway has accepted the route yet"},
		{"accepted and resolved", []gatewayv1.RouteParentStatus{parent(accepted, resolved)}, ""},
		{"not reported", []gatewayv1.RouteParentStatus{parent(accepted)}, "Gateway gateways/public has not reported ResolvedRefs"},
		{"refused", []gatewayv1.RouteParentStatus{parent(accepted, refused)},
			"Gateway gateways/public: ResolvedRefs is False (BackendNotFound: no Service iris-predictor)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			route := &gatewayv1.HTTPRoute{}
			route.Status.Parents = tt.parents
			assert.Equal(t, tt.want, gatewayapi.NotReady(route))
		})
	}
}
