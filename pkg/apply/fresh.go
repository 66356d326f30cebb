package apply

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FreshReader reads through a cached reader, but answers with an object
// Apply has just created when the cache has not seen it yet. Without it,
// the status computed right after a create would say "not created yet",
// and the next reconcile, once the cache catches up, would write the status
// again only to correct that.
type FreshReader struct {
	client.Reader
	created []client.Object
}

// NewFreshReader returns a reader over r that also knows the created objects.
func NewFreshReader(r client.Reader, created []client.Object) client.Reader {
	if len(created) == 0 {
		return r
	}
	return &FreshReader{Reader: r, created: created}
}

// Get implements client.Reader.
func (f *FreshReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := f.Reader.Get(ctx, key, obj, opts...)
	if !apierrors.IsNotFound(err) {
		return err
	}
	for _, c := range f.created {
		if c.GetName() != key.Name || c.GetNamespace() != key.Namespace || !sameKind(c, obj) {
			continue
		}
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(c.DeepCopyObject()).Elem())
		return nil
	}
	return err
}

// sameKind reports whether created can answer a read into obj: the same Go
// type and, for unstructured objects, the same group and kind.
func sameKind(created, obj client.Object) bool {
	if reflect.TypeOf(created) != reflect.TypeOf(obj) {
		return false
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return created.GetObjectKind().GroupVersionKind().GroupKind() == obj.GetObjectKind().GroupVersionKind().GroupKind()
	}
	return true
}
