package inferenceservice

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// forCRD maps a CRD event to every InferenceService when an optional CRD
// appears or goes: those that need the kind can now proceed, or must report
// it. The kind's watch starts when its CRD appears.
func (r *Reconciler) forCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	if r.pipeline.Watches.CRDChanged(ctx, obj) {
		return r.allInferenceServices(ctx)
	}
	return nil
}
