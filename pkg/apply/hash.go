package apply

import (
	"fmt"
	"reflect"

	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HashAnnotation carries, on every child, the hash of the desired state
// Serval last applied. After a restart the in-memory skip cache is empty; a
// child whose annotation matches the desired hash is then known to be up to
// date and is not written again, so a restart (or a leader change) costs no
// writes for an unchanged cluster.
const HashAnnotation = "serving.serval.dev/applied-hash"

// unstructuredMeta is the metadata access of an Unstructured apply
// configuration (client.ApplyConfigurationFromUnstructured).
type unstructuredMeta interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}

// withHash sets HashAnnotation on the object's apply configuration: an
// Unstructured one, or a typed one with an embedded
// ObjectMetaApplyConfiguration (client-go's and Gateway API's).
func withHash(ac any, hash string) error {
	if u, ok := ac.(unstructuredMeta); ok {
		annotations := u.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[HashAnnotation] = hash
		u.SetAnnotations(annotations)
		return nil
	}
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%T is not an apply configuration of an object", ac)
	}
	meta := v.Elem().FieldByName("ObjectMetaApplyConfiguration")
	if !meta.IsValid() || meta.Type() != reflect.TypeFor[*metav1ac.ObjectMetaApplyConfiguration]() {
		return fmt.Errorf("%T has no object metadata to annotate", ac)
	}
	if meta.IsNil() {
		meta.Set(reflect.ValueOf(&metav1ac.ObjectMetaApplyConfiguration{}))
	}
	meta.Interface().(*metav1ac.ObjectMetaApplyConfiguration).WithAnnotations(map[string]string{HashAnnotation: hash})
	return nil
}

// liveHash is the hash annotation of a live object, or "".
func liveHash(live client.Object) string {
	return live.GetAnnotations()[HashAnnotation]
}
