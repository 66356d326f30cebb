// Package owner holds the resolved owner of a child object: the reference
// every child carries, so that garbage collection deletes the children with
// their owner and watches map them back to it. Builders take an Ref, not the
// owner object itself.
package owner

import (
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Ref identifies the controlling owner of a child.
type Ref struct {
	APIVersion, Kind string
	Name, Namespace  string
	UID              types.UID
}

// Of is the reference to an InferenceService.
func Of(isvc *v1beta1.InferenceService) Ref {
	return Ref{APIVersion: v1beta1.GroupVersion.String(), Kind: "InferenceService", Name: isvc.Name, Namespace: isvc.Namespace, UID: isvc.UID}
}

// OfLLM is the reference to an LLMInferenceService.
func OfLLM(svc *v1alpha2.LLMInferenceService) Ref {
	return Ref{APIVersion: v1alpha2.GroupVersion.String(), Kind: "LLMInferenceService", Name: svc.Name, Namespace: svc.Namespace, UID: svc.UID}
}

// Reference is the controller owner reference, as an apply configuration.
func (r Ref) Reference() *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(r.APIVersion).
		WithKind(r.Kind).
		WithName(r.Name).
		WithUID(r.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// Unstructured is the controller owner reference in the map form of an
// Unstructured object.
func (r Ref) Unstructured() map[string]any {
	return map[string]any{
		"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name,
		"uid": string(r.UID), "controller": true, "blockOwnerDeletion": true,
	}
}
