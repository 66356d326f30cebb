package inferenceservice

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/runtime"
)

// runtimeIndex is a field index of InferenceServices by the runtimes they use
// or could use, so a runtime event re-enqueues exactly those.
const runtimeIndex = "serval.runtime"

// Index values.
func usesKey(kind, name string) string { return "uses:" + kind + "/" + name }
func namedKey(name string) string      { return "named:" + name }
func formatKey(format string) string   { return "format:" + format }

// runtimeIndexValues: the runtime in status; the runtime named in the spec;
// and, while no runtime is chosen, the model format (any new runtime serving
// it may resolve the InferenceService).
func runtimeIndexValues(obj client.Object) []string {
	isvc := obj.(*v1beta1.InferenceService)
	h := readHistory(isvc)
	var keys []string
	if n := h.ServingRuntime; n != "" {
		keys = append(keys, usesKey("ServingRuntime", isvc.Namespace+"/"+n))
	}
	if n := h.ClusterServingRuntime; n != "" {
		keys = append(keys, usesKey("ClusterServingRuntime", n))
	}
	d := isvc.DeepCopy()
	v1beta1.Default(d)
	if m := d.Spec.Predictor.Model; m != nil {
		if m.Runtime != nil {
			keys = append(keys, namedKey(*m.Runtime))
		}
		if h.ServingRuntime == "" && h.ClusterServingRuntime == "" {
			keys = append(keys, formatKey(m.ModelFormat.Name))
		}
	}
	// A canary may ask for another runtime, or a format no runtime serves
	// yet: a runtime of either re-enqueues the InferenceService.
	for _, c := range d.Spec.Canary {
		if m := c.Predictor.Model; m != nil {
			if m.Runtime != nil {
				keys = append(keys, namedKey(*m.Runtime))
			}
			if m.ModelFormat.Name != "" {
				keys = append(keys, formatKey(m.ModelFormat.Name))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// listRuntimes returns the namespace's ServingRuntimes and all
// ClusterServingRuntimes, from the cache.
func (r *Reconciler) listRuntimes(ctx context.Context, namespace string) ([]runtime.Runtime, error) {
	srs := &v1alpha1.ServingRuntimeList{}
	if err := r.Client.List(ctx, srs, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list ServingRuntimes: %w", err)
	}
	csrs := &v1alpha1.ClusterServingRuntimeList{}
	if err := r.Client.List(ctx, csrs); err != nil {
		return nil, fmt.Errorf("list ClusterServingRuntimes: %w", err)
	}
	out := make([]runtime.Runtime, 0, len(srs.Items)+len(csrs.Items))
	for i := range srs.Items {
		out = append(out, runtime.FromServingRuntime(&srs.Items[i]))
	}
	for i := range csrs.Items {
		out = append(out, runtime.FromClusterServingRuntime(&csrs.Items[i]))
	}
	return out, nil
}
