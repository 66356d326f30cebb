package inferenceservice

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/registry"
)

// planRoutes computes the plan, chooses the router once and renders its
// objects. A router whose CRD is missing is reported, and routes nothing.
func (r *Reconciler) planRoutes(_ context.Context, s *scope) error {
	clusterLocal := v1beta1.IsClusterLocal(s.isvc)
	plan, err := ingress.MakePlan(owner.Of(s.isvc), clusterLocal, s.comps, &s.cfg.Ingress)
	var hostErr *ingress.HostError
	key := types.NamespacedName{Namespace: s.isvc.Namespace, Name: s.isvc.Name}
	if errors.As(err, &hostErr) {
		// Reported on IngressReady: the InferenceService is not routed;
		// and on ConfigValid, with how many services the template fails.
		s.fail("", v1beta1.ReasonInvalidHost, hostErr.Error())
		s.templateFailure = fmt.Sprintf("%s renders an invalid %s for %d InferenceService(s) so far, this one included: %s",
			hostErr.Template, hostErr.What(), r.templateFailures.record(key, true), hostErr.Error())
		return nil
	}
	r.templateFailures.record(key, false)
	if err != nil {
		return fmt.Errorf("plan routes: %w", err)
	}
	s.plan = plan
	router := registry.Router(s.mode, &s.cfg.Ingress, clusterLocal, r.watches.Present)
	if k := r.watches.Missing(router.Kinds()); k != nil {
		s.missingRouteKind = k
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
	readiness, err := s.router.Ready(ctx, s.childReader(r.Client), s.plan, s.observed[s.plan.Top.Component])
	if err != nil {
		return fmt.Errorf("read routes: %w", err)
	}
	s.routes = readiness
	return nil
}
