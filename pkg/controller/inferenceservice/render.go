package inferenceservice

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apply"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/workload"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/workload/knative"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/workload/standard"
)

// workloadKinds are every kind a workload builder may create.
var workloadKinds = append(standard.Builder{}.Kinds(), knative.Builder{}.Kinds()...)

// workloadFor returns the builder of a mode, chosen once per reconcile.
func workloadFor(mode v1beta1.DeploymentMode) workload.Builder {
	if mode == v1beta1.Knative {
		return knative.Builder{}
	}
	return standard.Builder{}
}

// renderObjects renders every component's workload objects.
func (r *Reconciler) renderObjects(_ context.Context, s *scope) error {
	s.workload = workloadFor(s.mode)
	s.producedBy = map[string]v1beta1.ComponentType{}
	if kind := s.workload.Kinds()[0]; r.isOptional(kind) && !r.optional.Present(kind) {
		s.fail(v1beta1.PredictorComponent, v1beta1.ReasonMissingCRD, fmt.Sprintf(
			"the CRD %s is not installed, and the InferenceService uses Knative mode; install Knative Serving or use Standard mode", crdOf(kind)))
		return nil
	}
	for _, c := range s.comps {
		objs, err := s.workload.Objects(c)
		if err != nil {
			return fmt.Errorf("render %s: %w", c.Name, err)
		}
		if c.Type == v1beta1.PredictorComponent && pinned(s) {
			// disable-auto-update: leave the running predictor as it is until
			// the InferenceService itself changes. It stays desired, so the
			// prune step keeps it.
			freeze(objs, s.workload.Kinds()[0])
		}
		for _, o := range objs {
			s.producedBy[o.String()] = c.Type
		}
		s.objects = append(s.objects, objs...)
	}
	return nil
}

// pinned reports whether a runtime or config change must not roll the
// predictor: the annotation is set, the spec is unchanged since the last full
// reconcile, and the predictor has been deployed before.
func pinned(s *scope) bool {
	return s.isvc.Annotations[v1beta1.DisableAutoUpdateAnnotation] == "true" &&
		s.isvc.Status.ObservedGeneration == s.isvc.Generation &&
		s.isvc.Status.DeploymentMode != ""
}

// freeze marks the objects of a kind as kept as they run.
func freeze(objs []apply.Object, gvk schema.GroupVersionKind) {
	for i := range objs {
		if objs[i].GVK == gvk {
			objs[i].Frozen = true
		}
	}
}
