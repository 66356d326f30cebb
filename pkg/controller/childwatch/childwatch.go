// Package childwatch watches the kinds of child objects a controller
// creates: the kinds every cluster serves from the start, an optional kind
// (Knative Service, HTTPRoute, VirtualService) from when its CRD exists. A
// watch on a kind whose CRD is absent fails cache sync and would stop the
// manager. It also answers whether a kind can be used now.
package childwatch

import (
	"context"
	"maps"
	"reflect"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// Watches watches a fixed list of child kinds from one cache, mapping each
// child to its controlling owner.
type Watches struct {
	cache     cache.Cache
	scheme    *runtime.Scheme
	mapper    meta.RESTMapper
	apiReader client.Reader
	owner     client.Object
	kinds     []kinds.Kind
	ctrl      controller.Controller

	// epochs are the cache's, shared with the other Watches of the cache.
	epochs *epochs

	mu       sync.Mutex
	present  map[string]bool // by CRD name
	watching map[string]bool // by GVK
	// startedIn is the epoch each kind's source was started in (see
	// epochs), by GVK.
	startedIn map[string]int
}

// New returns the watches of ks, read from c, for children controlled by
// an object of owner's type. apiReader checks CRDs uncached.
func New(c cache.Cache, scheme *runtime.Scheme, mapper meta.RESTMapper, apiReader client.Reader, owner client.Object, ks []kinds.Kind) *Watches {
	return &Watches{cache: c, scheme: scheme, mapper: mapper, apiReader: apiReader, owner: owner, kinds: ks, epochs: epochsOf(c),
		present: map[string]bool{}, watching: map[string]bool{}, startedIn: map[string]int{}}
}

// Present reports whether the kind can be used: built in, or its CRD exists.
func (w *Watches) Present(k kinds.Kind) bool {
	if !k.Optional() {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.present[k.CRD]
}

// Missing returns the first of the kinds whose CRD is absent, if any.
func (w *Watches) Missing(ks []kinds.Kind) *kinds.Kind {
	for i := range ks {
		if !w.Present(ks[i]) {
			return &ks[i]
		}
	}
	return nil
}

// PresentGVKs are the kinds that can be used now: those the prune step lists.
func (w *Watches) PresentGVKs() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range w.kinds {
		if w.Present(k) {
			out = append(out, k.GVK)
		}
	}
	return out
}

// Start watches every kind that can be used now, for ctrl. It runs once the
// controller is built.
func (w *Watches) Start(ctx context.Context, ctrl controller.Controller) error {
	w.mu.Lock()
	w.ctrl = ctrl
	w.mu.Unlock()
	for _, k := range w.kinds {
		if k.Optional() {
			if _, err := w.refresh(ctx, k.CRD); err != nil {
				return err
			}
		}
		if err := w.watch(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// watch starts the watch on a kind the first time it can be used.
func (w *Watches) watch(ctx context.Context, k kinds.Kind) error {
	if !w.Present(k) {
		return nil
	}
	key := k.GVK.String()
	w.mu.Lock()
	if w.watching[key] || w.ctrl == nil {
		w.mu.Unlock()
		return nil
	}
	// Claimed, then the lock released: Watch blocks while the controller
	// starts, and the CRD events' handler (refresh) must not wait on it
	// meanwhile, or the controller's start waits for that handler's source
	// until its cache-sync timeout.
	w.watching[key] = true
	w.startedIn[key] = w.epochs.back(key)
	ctrl := w.ctrl
	w.mu.Unlock()
	// A child's creation wakes no reconcile: the reconcile that created it
	// saw it created (apply.FreshReader). The informer's first list does:
	// an optional kind's watch may start after its owners were reconciled,
	// and the objects listed then may have changed since.
	preds := []predicate.Predicate{predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return e.IsInInitialList }}}
	if k.StatusSignal != nil {
		preds = append(preds, StatusSignalChanged(k.StatusSignal))
	}
	enqueue := Prioritized(handler.EnqueueRequestForOwner(w.scheme, w.mapper, w.owner, handler.OnlyControllerOwner()))
	src := source.Kind(w.cache, k.New(), enqueue, preds...)
	if err := ctrl.Watch(src); err != nil {
		w.mu.Lock()
		delete(w.watching, key)
		w.mu.Unlock()
		return err
	}
	if k.Optional() {
		log.FromContext(ctx).Info("Watching an optional kind now that its CRD exists", "kind", k.String())
	}
	return nil
}

// refresh checks a CRD with an uncached read. It reports whether its
// presence changed.
func (w *Watches) refresh(ctx context.Context, crdName string) (bool, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := w.apiReader.Get(ctx, types.NamespacedName{Name: crdName}, crd)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	exists := err == nil && crd.DeletionTimestamp == nil
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := w.present[crdName] != exists
	w.present[crdName] = exists
	return changed, nil
}

// crdReadTimeout bounds the uncached read of a CRD on its event.
const crdReadTimeout = 30 * time.Second

// CRDChanged handles an event of a CRD: when it serves one of the kinds, it
// checks the CRD again and starts the kind's watch if it now exists. It
// reports whether the CRD's presence changed: the owners that need the kind
// can now proceed, or must report it.
func (w *Watches) CRDChanged(ctx context.Context, crd client.Object) bool {
	for _, k := range w.kinds {
		if crd.GetName() != k.CRD {
			continue
		}
		// The read does not end with the event handler's context: one
		// canceled under it (seen when a CRD goes and comes back) would
		// leave the kind's presence as it was, and its owners waiting for
		// a CRD that exists.
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), crdReadTimeout)
		changed, err := w.refresh(readCtx, k.CRD)
		if err == nil {
			err = w.renew(readCtx, k)
		}
		cancel()
		if err != nil {
			log.FromContext(ctx).Error(err, "Check an optional CRD", "crd", k.CRD)
			return false
		}
		// Not here: while the controller starts, it holds the lock Watch
		// takes and waits for this very handler's source to sync.
		go func() {
			if err := w.watch(context.WithoutCancel(ctx), k); err != nil {
				log.FromContext(ctx).Error(err, "Watch an optional kind", "kind", k.String())
			}
		}()
		return changed
	}
	return false
}

// renew removes the kind's informer when its CRD is gone (once per
// epoch, for every Watches of the cache), and lets watch start a new source
// when the CRD is back and this Watches' source is of an earlier epoch.
func (w *Watches) renew(ctx context.Context, k kinds.Kind) error {
	key := k.GVK.String()
	if !w.Present(k) {
		_, err := w.epochs.gone(ctx, w.cache, key, k.New())
		return err
	}
	epoch := w.epochs.back(key)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watching[key] && w.startedIn[key] != epoch {
		w.watching[key] = false
	}
	return nil
}

// StatusSignalChanged lets through creates, deletes, and the updates that
// change a child's metadata or spec (drift to repair) or what the
// controller reads of its status (kinds.Kind.StatusSignal).
func StatusSignalChanged(signal func(client.Object) string) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) || !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!reflect.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
			o.GetDeletionTimestamp() != n.GetDeletionTimestamp() ||
			signal(o) != signal(n)
	}}
}
