package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
)

// planRoutes computes where the InferenceService is reached and chooses
// its router, once. A template that renders an invalid host stops the
// reconcile, reported on IngressReady and ConfigValid.
func (r *Reconciler) planRoutes(_ context.Context, s *scope) error {
	clusterLocal := v1beta1.IsClusterLocal(s.isvc)
	plan, err := ingress.MakePlan(owner.Of(s.isvc), config.Meta{Labels: s.isvc.Labels, Annotations: s.isvc.Annotations}, clusterLocal, s.comps, &s.cfg.Ingress)
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
	plan.Canary = wantsSplit(s.defaulted, s.mode)
	plan.SplitPredictor(s.splits)
	s.plan = plan
	for _, c := range s.comps {
		if c.KEDAScalesToZero() {
			c.Activator = s.cfg.Activator.ScalerAddress
		}
		if c.ScalesFromZero() {
			c.Hosts = plan.HostsOf(c.Type)
		}
	}
	s.router = childkinds.Router(s.mode, &s.cfg.Ingress, clusterLocal, r.pipeline.Watches.Present)
	return nil
}

// runChildren renders, applies, prunes and observes the children through
// the pipeline every owner kind shares; for a stopped InferenceService it
// renders none, so every child is pruned.
func (r *Reconciler) runChildren(ctx context.Context, s *scope) error {
	cluster, err := r.KnativeFeatures.Cluster(ctx)
	if err != nil {
		return err
	}
	s.workload = childkinds.Mode(s.mode)
	req := pipeline.Request{
		Owner:      pipeline.Owner{Object: s.isvc, Ref: owner.Of(s.isvc)},
		Mode:       s.workload,
		Components: append(slices.Clip(s.comps), s.splits...),
		Cluster:    cluster,
		Plan:       s.plan,
		Router:     s.router,
	}
	if s.stopped {
		req.Components, req.Plan, req.Router = nil, nil, nil
		req.Parked = parkedPredictor(s)
	}
	req.Adjust = func(c *components.Component, objs []apply.Object) {
		if c.Type != v1beta1.PredictorComponent || c.Split != nil {
			return
		}
		if s.history.Pinned || s.holdPredictor {
			// disable-auto-update: leave the running predictor as it is
			// until the InferenceService itself changes; canaryTrafficPercent:
			// keep the revision last rolled out while the latest takes its
			// share beside it. It stays desired, so the prune step keeps it.
			pipeline.Freeze(objs, s.workload)
		}
		// Before the apply annotates it: the status compares it with the
		// live Deployment's to know the latest revision is rolled out.
		s.predictorHash = pipeline.WorkloadHash(objs, s.workload)
	}
	s.out, err = r.pipeline.Run(ctx, req)
	s.staleRead = s.out.Stale
	if s.out.Failure != nil {
		s.failure, s.stop = s.out.Failure, true
	}
	return err
}
