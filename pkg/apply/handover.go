package apply

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HandoverOwner is the field manager that keeps a Deployment's replicas while
// an autoscaler takes them over from Serval.
const HandoverOwner = "serval-replicas-handover"

// handOverReplicas runs before Serval stops sending a Deployment's replicas.
// Server-side apply resets a field to its default when its only manager stops
// sending it, so dropping replicas from the apply would scale the Deployment
// down to 1 until the autoscaler reacts. A second manager first co-owns the
// field at its live value; Serval's own apply then releases it without a change.
func (a *Applier) handOverReplicas(ctx context.Context, live client.Object, obj Object) error {
	keep, ok := replicasKeeper(live)
	if !ok {
		return nil
	}
	if err := a.client.Apply(ctx, keep, client.FieldOwner(HandoverOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("hand over the replicas of %s: %w", obj, err)
	}
	a.counts.Write(obj.GVK.Kind)
	return nil
}

// replicasKeeper is the apply that co-owns a live object's replicas at
// their value: a Deployment, or a kind Serval reads as Unstructured with
// spec.replicas (a LeaderWorkerSet); ok is false when Serval does not own
// them.
func replicasKeeper(live client.Object) (runtime.ApplyConfiguration, bool) {
	if !ownsField(live.GetManagedFields(), FieldOwner, "f:spec", "f:replicas") {
		return nil, false
	}
	switch o := live.(type) {
	case *appsv1.Deployment:
		if o.Spec.Replicas == nil {
			return nil, false
		}
		return appsv1ac.Deployment(o.Name, o.Namespace).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(*o.Spec.Replicas)), true
	case *unstructured.Unstructured:
		n, found, err := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if !found || err != nil {
			return nil, false
		}
		keep := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": n}}}
		keep.SetGroupVersionKind(o.GroupVersionKind())
		keep.SetName(o.GetName())
		keep.SetNamespace(o.GetNamespace())
		return client.ApplyConfigurationFromUnstructured(keep), true
	}
	return nil, false
}

// ownsField reports whether manager holds the field at path through an Apply.
func ownsField(entries []metav1.ManagedFieldsEntry, manager string, path ...string) bool {
	for _, e := range entries {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.FieldsV1 == nil {
			continue
		}
		var node map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &node); err != nil {
			continue
		}
		found := true
		for _, p := range path {
			next, ok := node[p].(map[string]any)
			if !ok {
				found = false
				break
			}
			node = next
		}
		if found {
			return true
		}
	}
	return false
}
