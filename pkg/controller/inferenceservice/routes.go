package inferenceservice

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress/kubeingress"
)

// routerFor returns the route builder the config selects, chosen once per
// reconcile.
func routerFor(cfg *config.Ingress) ingress.Builder {
	if cfg.EnableGatewayAPI {
		return gatewayapi.Builder{Config: cfg}
	}
	return kubeingress.Builder{Config: cfg}
}

// planRoutes computes the plan and, for an external InferenceService, the
// route objects. A route kind whose CRD is missing is reported, not applied.
func (r *Reconciler) planRoutes(_ context.Context, s *scope) error {
	plan, err := ingress.MakePlan(s.isvc, s.comps, &s.cfg.Ingress)
	if err != nil {
		return fmt.Errorf("plan routes: %w", err)
	}
	s.plan = plan
	if !plan.External || s.mode == v1beta1.Knative {
		// Knative routes its Services itself.
		return nil
	}
	router := routerFor(&s.cfg.Ingress)
	if kind := router.Kind(); r.isOptional(kind) && !r.optional.Present(kind) {
		s.missingCRD = crdOf(kind)
		return nil
	}
	objs, err := router.Objects(plan)
	if err != nil {
		return err
	}
	s.router = router
	s.objects = append(s.objects, objs...)
	return nil
}

// observeRoutes reads the routes' readiness.
func (r *Reconciler) observeRoutes(ctx context.Context, s *scope) error {
	if s.router == nil {
		return nil
	}
	readiness, err := s.router.Ready(ctx, r.Client, s.plan)
	if err != nil {
		return fmt.Errorf("read routes: %w", err)
	}
	s.routes = readiness
	return nil
}

func (r *Reconciler) isOptional(gvk schema.GroupVersionKind) bool {
	for _, k := range optionalKinds {
		if k.gvk == gvk {
			return true
		}
	}
	return false
}

func crdOf(gvk schema.GroupVersionKind) string {
	for _, k := range optionalKinds {
		if k.gvk == gvk {
			return k.crd
		}
	}
	return gvk.String()
}

// pruneKinds are the child kinds pruned: the workloads', the Ingress, less
// the optional kinds whose CRD is absent.
func (r *Reconciler) pruneKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for _, k := range append(append([]schema.GroupVersionKind{}, workloadKinds...), kubeingress.IngressKind, gatewayapi.HTTPRouteKind) {
		if !r.isOptional(k) || r.optional.Present(k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}
