package apply

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PruneScope says which children of which kinds belong to one owner.
type PruneScope struct {
	Namespace string
	// Labels select the owner's children.
	Labels map[string]string
	// Owner is the controlling owner's UID; only objects it
	// controls are ever deleted.
	Owner types.UID
	// OwnerLabel, when set, is the label that names the owner by UID in
	// place of a controller reference (see Object.OwnerLabel).
	OwnerLabel string
	// Kinds are the kinds to prune; a fixed list, less those whose CRD is absent.
	Kinds []schema.GroupVersionKind
	// Fields narrow the list of a kind with a cache index (the labels still
	// apply); kinds without an entry are listed by label alone.
	Fields map[schema.GroupVersionKind]client.MatchingFields
}

// Prune deletes the owner's children of scope.Kinds that are not in desired
// (a removed transformer, an HPA after switching to autoscalerClass none, an
// Ingress after switching to Gateway API). It returns the objects it deleted.
func (a *Applier) Prune(ctx context.Context, scope PruneScope, desired []Object) ([]string, error) {
	keep := map[cacheKey]bool{}
	for _, o := range desired {
		keep[cacheKey{kind: o.GVK.Kind, key: o.Key}] = true
	}
	var deleted []string
	var errs []error
	for _, gvk := range scope.Kinds {
		items, err := a.list(ctx, gvk, scope)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, item := range items {
			ck := cacheKey{kind: gvk.Kind, key: types.NamespacedName{Namespace: item.GetNamespace(), Name: item.GetName()}}
			if keep[ck] || !ownedBy(item, scope.Owner, scope.OwnerLabel) || item.GetDeletionTimestamp() != nil {
				continue
			}
			if err := a.delete(ctx, gvk, item); err != nil {
				errs = append(errs, err)
				continue
			}
			a.cache.Delete(ck)
			deleted = append(deleted, gvk.Kind+" "+item.GetName())
		}
	}
	return deleted, errors.Join(errs...)
}

// ownedBy reports whether owner controls obj: by its controller
// reference, or, with label set, by the UID the label holds.
func ownedBy(obj metav1.Object, owner types.UID, label string) bool {
	if label != "" {
		return owner != "" && obj.GetLabels()[label] == string(owner)
	}
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == owner
}

// list returns the scope's objects of one kind, from the typed list the cache
// already holds (a metadata-only list would start a second informer).
func (a *Applier) list(ctx context.Context, gvk schema.GroupVersionKind, scope PruneScope) ([]metav1.Object, error) {
	var list client.ObjectList
	if obj, err := a.client.Scheme().New(gvk.GroupVersion().WithKind(gvk.Kind + "List")); err == nil {
		list = obj.(client.ObjectList)
	} else {
		u := &unstructured.UnstructuredList{}
		u.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		list = u
	}
	opts := []client.ListOption{client.InNamespace(scope.Namespace), client.MatchingLabels(scope.Labels)}
	if fields, ok := scope.Fields[gvk]; ok {
		opts = append(opts, fields)
	}
	if err := a.client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

func (a *Applier) delete(ctx context.Context, gvk schema.GroupVersionKind, item metav1.Object) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(item.GetNamespace())
	obj.SetName(item.GetName())
	// The UID precondition makes sure a same-named object created meanwhile
	// by someone else is never deleted.
	uid := item.GetUID()
	err := a.client.Delete(ctx, obj, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("prune %s %s/%s: %w", gvk.Kind, item.GetNamespace(), item.GetName(), err)
	}
	a.counts.Write(gvk.Kind)
	return nil
}
