// Package knativeroute is the router of Knative mode without Istio: Knative
// routes each component's Knative Service itself, so there is nothing to
// create; the top-level URL is the URL Knative gives the top component.
package knativeroute

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Router is the ingress.Router of Knative's own routes.
type Router struct{}

var _ ingress.Router = Router{}

// Name implements ingress.Router.
func (Router) Name() string { return "Knative" }

// Kinds implements ingress.Router: Knative's routes are Knative's.
func (Router) Kinds() []kinds.Kind { return nil }

// Refuse implements ingress.Router: every plan Serval makes can be routed
// this way.
func (Router) Refuse(*ingress.Plan) *workload.Refusal { return nil }

// Objects implements ingress.Router.
func (Router) Objects(*ingress.Plan) ([]apply.Object, error) { return nil, nil }

// Ready implements ingress.Router: ready once Knative has given the top
// component its URL, which becomes the InferenceService's.
func (Router) Ready(_ context.Context, _ client.Reader, _ *ingress.Plan, top workload.State) (ingress.Readiness, error) {
	return Readiness(top), nil
}

// Readiness reads the top component's Knative route.
func Readiness(top workload.State) ingress.Readiness {
	if top.URL == "" {
		return ingress.Readiness{Reason: v1beta1.ReasonWaitingForKnativeRoute, Message: "the Knative Service has no URL yet"}
	}
	return ingress.Readiness{Ready: true, Reason: v1beta1.ReasonKnativeRoutes, URL: top.URL}
}
