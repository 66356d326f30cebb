package inferenceservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/registry"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// renderObjects renders every component's workload objects with the mode's
// implementation, chosen once. A mode whose CRD is missing, or a component
// the cluster would refuse (Knative's feature flags), is reported instead.
func (r *Reconciler) renderObjects(ctx context.Context, s *scope) error {
	s.workload = registry.Mode(s.mode)
	s.producedBy = map[string]v1beta1.ComponentType{}
	// The workload itself first: in a mode whose CRD is missing, nothing is
	// rendered.
	if k := r.watches.Missing(s.workload.Kinds()[:1]); k != nil {
		s.fail(v1beta1.PredictorComponent, v1beta1.ReasonMissingCRD, fmt.Sprintf(
			"the CRD %s is not installed, and the InferenceService uses %s mode; %s", k.CRD, s.mode, k.Install))
		return nil
	}
	cluster, err := r.clusterFacts(ctx)
	if err != nil {
		return err
	}
	for _, c := range s.comps {
		if refused := s.workload.Refuse(c, cluster); len(refused) > 0 {
			s.fail(c.Type, v1beta1.ReasonKnativeFeatureDisabled, fmt.Sprintf(
				"Knative would reject the %s's pod as ConfigMap %s stands: %s",
				c.Type, r.KnativeFeatures.Key(), strings.Join(refused, "; ")))
			return nil
		}
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
		// An optional kind the component asks for (a KEDA ScaledObject)
		// whose CRD is missing.
		if k := r.watches.Missing(kinds.Used(s.workload.Kinds(), gvksOf(objs))); k != nil {
			s.fail(c.Type, v1beta1.ReasonMissingCRD, fmt.Sprintf("the CRD %s is not installed, and the %s needs a %s; %s", k.CRD, c.Type, k.GVK.Kind, k.Install))
			return nil
		}
		for _, o := range objs {
			s.producedBy[o.String()] = c.Type
		}
		s.objects = append(s.objects, objs...)
	}
	return nil
}

func gvksOf(objs []apply.Object) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, len(objs))
	for i, o := range objs {
		out[i] = o.GVK
	}
	return out
}

// clusterFacts reads what a mode may need to know of the cluster: Knative's
// feature flags, from the cache.
func (r *Reconciler) clusterFacts(ctx context.Context) (workload.Cluster, error) {
	features, err := r.KnativeFeatures.Snapshot(ctx)
	if err != nil {
		return workload.Cluster{}, err
	}
	return workload.Cluster{KnativeFeatures: features}, nil
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
func freeze(objs []apply.Object, k kinds.Kind) {
	for i := range objs {
		if objs[i].GVK == k.GVK {
			objs[i].Frozen = true
		}
	}
}
