package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ParkedReplicasAnnotation records, on a workload parked at zero replicas
// (see Object.Parked), the replicas it had, for the Frozen apply that
// brings it back.
const ParkedReplicasAnnotation = "serving.serval.dev/parked-replicas"

// park scales a live workload of the owner to zero and records the
// replicas it had; a missing one stays missing. Its spec is never applied
// (Serval may no longer be able to render it: it is kept because it is the
// only copy of what ran), so only replicas and the annotation are patched.
func (a *Applier) park(ctx context.Context, owner types.UID, obj Object, live client.Object) error {
	if live == nil {
		a.counts.Skip(obj.GVK.Kind)
		return nil
	}
	if ref := metav1.GetControllerOf(live); ref == nil || ref.UID != owner {
		return &ConflictError{Object: obj, Owner: controllerName(ref)}
	}
	replicas, err := replicasOf(live)
	if err != nil {
		return err
	}
	if _, parked := live.GetAnnotations()[ParkedReplicasAnnotation]; parked && replicas == 0 {
		a.counts.Skip(obj.GVK.Kind)
		return nil
	}
	recorded := strconv.FormatInt(replicas, 10)
	if r, parked := live.GetAnnotations()[ParkedReplicasAnnotation]; parked {
		recorded = r // scaled up by hand while parked: keep the first count
	}
	return a.patchReplicas(ctx, obj, live, 0, &recorded)
}

// unpark gives a parked live workload back the replicas it had.
func (a *Applier) unpark(ctx context.Context, obj Object, live client.Object) error {
	r, parked := live.GetAnnotations()[ParkedReplicasAnnotation]
	if !parked {
		return nil
	}
	n, err := strconv.ParseInt(r, 10, 32)
	if err != nil || n < 0 {
		n = 1
	}
	return a.patchReplicas(ctx, obj, live, n, nil)
}

// patchReplicas sets live's replicas and the parked annotation (nil
// removes it) with a merge patch, which touches nothing else.
func (a *Applier) patchReplicas(ctx context.Context, obj Object, live client.Object, replicas int64, annotation *string) error {
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{ParkedReplicasAnnotation: annotation}},
		"spec":     map[string]any{"replicas": replicas},
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := a.client.Patch(ctx, live, client.RawPatch(types.MergePatchType, data), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("scale %s to %d: %w", obj, replicas, err)
	}
	a.counts.Write(obj.GVK.Kind)
	return nil
}

// replicasOf reads spec.replicas of a live workload (1 when unset, the
// API server's default).
func replicasOf(live client.Object) (int64, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return 0, err
	}
	n, found, err := unstructured.NestedInt64(u, "spec", "replicas")
	if err != nil || !found {
		return 1, nil
	}
	return n, nil
}
