// Package owner builds the owner reference every child of an InferenceService
// carries, so that garbage collection deletes the children with it and
// watches map them back to it.
package owner

import (
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Reference is the controller owner reference to isvc.
func Reference(isvc *v1beta1.InferenceService) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1beta1.GroupVersion.String()).
		WithKind("InferenceService").
		WithName(isvc.Name).
		WithUID(isvc.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}
