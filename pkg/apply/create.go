package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Creating a child the cache does not show.
//
// The cache holds only Serval-labelled objects, so "not in the cache" does
// not mean "absent": a foreign object of the same name must never be taken
// over, and server-side apply would take it over. Confirming absence with a
// read would cost a request per new child. Instead the child is created
// with a plain create, which the API server refuses if the name is taken;
// only then is the object read, to tell a foreign object from one of
// Serval's that the cache has not seen yet.
//
// A plain create records its fields under an Update entry of Serval's field
// manager, and server-side apply does not remove fields that an Update entry
// owns. So before the first apply to such an object, the entry is folded
// into Serval's Apply entry (upgradeOwnership): from then on, a field Serval
// stops sending is removed as usual.

// errExists reports a create refused because the name is taken.
var errExists = fmt.Errorf("exists")

// create creates obj from its apply configuration and returns the object
// as the API server stored it. It returns errExists if an object of the
// name exists, whoever owns it.
func (a *Applier) create(ctx context.Context, obj Object) (client.Object, error) {
	data, err := json.Marshal(obj.Spec)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj, err)
	}
	created, err := newLive(a.client.Scheme(), obj.GVK)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, created); err != nil {
		return nil, fmt.Errorf("decode %s: %w", obj, err)
	}
	created.GetObjectKind().SetGroupVersionKind(obj.GVK)
	if err := a.client.Create(ctx, created, client.FieldOwner(FieldOwner)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, errExists
		}
		return nil, err
	}
	// The response carries no kind; readers of the object expect one.
	created.GetObjectKind().SetGroupVersionKind(obj.GVK)
	return created, nil
}

// ownsThroughUpdate reports whether Serval's field manager holds fields of
// live through an Update entry: a child Serval created (see above).
func ownsThroughUpdate(live metav1.Object) bool {
	for _, e := range live.GetManagedFields() {
		if e.Manager == FieldOwner && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// upgradeOwnership folds the Update entry of Serval's field manager into
// its Apply entry on the live object, read uncached (the cache keeps only a
// marker of the entry). It returns the object as it now is.
func (a *Applier) upgradeOwnership(ctx context.Context, obj Object) (client.Object, error) {
	live, err := newLive(a.client.Scheme(), obj.GVK)
	if err != nil {
		return nil, err
	}
	if err := a.uncached.Get(ctx, obj.Key, live); err != nil {
		return nil, fmt.Errorf("get %s: %w", obj, err)
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New(FieldOwner), FieldOwner)
	if err != nil || patch == nil {
		return live, err
	}
	if err := a.client.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		return nil, fmt.Errorf("take over the fields of %s for server-side apply: %w", obj, err)
	}
	a.counts.Write(obj.GVK.Kind)
	return live, nil
}
