package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/runtime"
)

// splitNames are the Deployments that may take a share of the predictor's
// traffic in Standard mode: the canaries of spec.canary, and the latest
// revision while canaryTrafficPercent splits it.
func splitNames(isvc *v1beta1.InferenceService) []string {
	var names []string
	for _, c := range isvc.Spec.Canary {
		names = append(names, v1beta1.PredictorChildName(isvc.Name, c.Predictor.Name))
	}
	if isvc.Spec.Predictor.CanaryTrafficPercent != nil {
		names = append(names, v1beta1.CanaryRevisionName(isvc.Name))
	}
	return names
}

// wantsSplit: the spec splits the predictor's traffic, with spec.canary or
// (in Standard mode) canaryTrafficPercent, whether or not a canary runs now.
func wantsSplit(isvc *v1beta1.InferenceService, mode v1beta1.DeploymentMode) bool {
	return mode == v1beta1.Standard && (len(isvc.Spec.Canary) > 0 || isvc.Spec.Predictor.CanaryTrafficPercent != nil)
}

// readCanaries reads, from the cache, which of the Deployments that may
// split the predictor's traffic have an available replica: those take
// their share of it (KServe's rule), and the stable predictor's minimum
// goes down by their replicas.
func (r *Reconciler) readCanaries(ctx context.Context, s *scope) error {
	if s.mode != v1beta1.Standard {
		return nil
	}
	for _, name := range splitNames(s.defaulted) {
		d := &appsv1.Deployment{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.isvc.Namespace, Name: name}, d)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if d.Status.AvailableReplicas > 0 {
			if s.readyCanaries == nil {
				s.readyCanaries = map[string]bool{}
			}
			s.readyCanaries[name] = true
		}
	}
	return nil
}

// splitInProgress reports whether the status records a canaryTrafficPercent
// split under way: a latest revision beside the one last rolled out, which
// the stable predictor's Deployment alone still runs.
func splitInProgress(s *scope) bool {
	percent := s.defaulted.Spec.Predictor.CanaryTrafficPercent
	h := s.history.Components[v1beta1.PredictorComponent]
	return s.mode == v1beta1.Standard && percent != nil && *percent < 100 &&
		h.LatestRolledoutRevision != "" && h.LatestCreatedRevision != "" && h.LatestCreatedRevision != h.LatestRolledoutRevision
}

// parkedPredictor is what a stopped InferenceService keeps of a split
// under way: the stable predictor's Deployment, the only copy of the
// revision last rolled out, scaled to zero rather than deleted, so that
// resuming brings back that revision and the split as they were.
func parkedPredictor(s *scope) []apply.Object {
	if !splitInProgress(s) {
		return nil
	}
	return []apply.Object{{GVK: s.workload.Workload().GVK, Parked: true,
		Key: types.NamespacedName{Namespace: s.isvc.Namespace, Name: v1beta1.PredictorChildName(s.isvc.Name, "")}}}
}

// selectCanaryRuntimes chooses a runtime for each canary whose model asks
// for another one than the stable predictor's (another format, version,
// runtime or protocol); the others share the stable predictor's.
func (r *Reconciler) selectCanaryRuntimes(runtimes []runtime.Runtime, stable *runtime.Request, s *scope) error {
	if s.mode != v1beta1.Standard {
		return nil
	}
	for i := range s.defaulted.Spec.Canary {
		name := s.defaulted.Spec.Canary[i].Predictor.Name
		predictor, err := s.defaulted.Spec.CanaryPredictor(i)
		if err != nil {
			s.fail(v1beta1.PredictorComponent, string(v1beta1.InvalidPredictorSpec), err.Error())
			return nil
		}
		canary := s.defaulted.DeepCopy()
		canary.Spec.Predictor = predictor
		req := components.RuntimeRequest(canary)
		if req == nil || sameRuntimeRequest(req, stable) {
			continue
		}
		sel, err := runtime.Select(*req, runtimes)
		var selErr *runtime.SelectionError
		if errors.As(err, &selErr) {
			s.fail(v1beta1.PredictorComponent, string(selErr.Reason), fmt.Sprintf("canary %q: %s", name, selErr.Message))
			return nil
		}
		if err != nil {
			return err
		}
		if s.canaryRuntimes == nil {
			s.canaryRuntimes = map[string]*runtime.Selection{}
		}
		s.canaryRuntimes[name] = sel
	}
	return nil
}

func sameRuntimeRequest(a, b *runtime.Request) bool {
	return b != nil && a.Runtime == b.Runtime && reflect.DeepEqual(a.ModelFormat, b.ModelFormat) && reflect.DeepEqual(a.Protocol, b.Protocol)
}

// splitRevision applies canaryTrafficPercent in Standard mode. While the
// predictor's latest revision differs from the last one rolled out and the
// percent is under 100, the predictor's Deployment is kept as it is (the
// last revision) and the latest runs beside it as
// {isvc}-predictor-canary, taking the percent once ready; at 0 it does not
// run (a rollback). At 100, without the field, or once both revisions are
// the same, the predictor's Deployment takes the latest revision and the
// canary one is removed.
func (r *Reconciler) splitRevision(_ context.Context, s *scope) error {
	s.revision = ""
	if s.mode != v1beta1.Standard || len(s.comps) == 0 || s.comps[0].Type != v1beta1.PredictorComponent {
		return nil
	}
	predictor := s.comps[0]
	s.revision = components.Revision(predictor)
	percent := s.defaulted.Spec.Predictor.CanaryTrafficPercent
	rolledOut := s.history.Components[v1beta1.PredictorComponent].LatestRolledoutRevision
	if percent == nil || *percent >= 100 || rolledOut == "" || rolledOut == s.revision {
		return nil
	}
	s.holdPredictor = true
	if *percent == 0 {
		return nil
	}
	name := v1beta1.CanaryRevisionName(s.isvc.Name)
	s.splits = append(s.splits, components.LatestRevision(predictor, name, int32(*percent), s.readyCanaries[name]))
	return nil
}
