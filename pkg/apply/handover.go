package apply

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	dep, ok := live.(*appsv1.Deployment)
	if !ok || dep.Spec.Replicas == nil || !ownsField(dep.ManagedFields, FieldOwner, "f:spec", "f:replicas") {
		return nil
	}
	keep := appsv1ac.Deployment(dep.Name, dep.Namespace).
		WithSpec(appsv1ac.DeploymentSpec().WithReplicas(*dep.Spec.Replicas))
	if err := a.client.Apply(ctx, keep, client.FieldOwner(HandoverOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("hand over the replicas of %s: %w", obj, err)
	}
	a.counts.Write(obj.GVK.Kind)
	return nil
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
