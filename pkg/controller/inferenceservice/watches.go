package inferenceservice

import (
	"context"
	"maps"
	"reflect"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/kinds"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/registry"
)

// childWatches watches every child kind of the registry: the kinds every
// cluster serves from the start, an optional kind from when its CRD exists (a
// watch on a kind without its CRD fails cache sync and would stop the
// manager). It also answers whether a kind can be used now.
type childWatches struct {
	mgr  manager.Manager
	ctrl controller.Controller

	mu       sync.Mutex
	present  map[string]bool // by CRD name
	watching map[string]bool // by GVK
}

func newChildWatches(mgr manager.Manager) *childWatches {
	return &childWatches{mgr: mgr, present: map[string]bool{}, watching: map[string]bool{}}
}

// Present reports whether the kind can be used: built in, or its CRD exists.
func (w *childWatches) Present(k kinds.Kind) bool {
	if !k.Optional() {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.present[k.CRD]
}

// Missing returns the first of the kinds whose CRD is absent, if any.
func (w *childWatches) Missing(ks []kinds.Kind) *kinds.Kind {
	for i := range ks {
		if !w.Present(ks[i]) {
			return &ks[i]
		}
	}
	return nil
}

// PresentGVKs are the registry's kinds that can be used now: those the
// prune step lists.
func (w *childWatches) PresentGVKs() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, k := range registry.Kinds() {
		if w.Present(k) {
			out = append(out, k.GVK)
		}
	}
	return out
}

// start watches every kind that can be used now. It runs once the controller
// is built, and again whenever a CRD appears.
func (w *childWatches) start(ctx context.Context) error {
	for _, k := range registry.Kinds() {
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
func (w *childWatches) watch(ctx context.Context, k kinds.Kind) error {
	if !w.Present(k) {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watching[k.GVK.String()] || w.ctrl == nil {
		return nil
	}
	var preds []predicate.Predicate
	if k.StatusSignal != nil {
		preds = append(preds, statusSignalChanged(k.StatusSignal))
	}
	src := source.Kind(w.mgr.GetCache(), k.New(), handler.EnqueueRequestForOwner(
		w.mgr.GetScheme(), w.mgr.GetRESTMapper(), &v1beta1.InferenceService{}, handler.OnlyControllerOwner()), preds...)
	if err := w.ctrl.Watch(src); err != nil {
		return err
	}
	w.watching[k.GVK.String()] = true
	if k.Optional() {
		log.FromContext(ctx).Info("Watching an optional kind now that its CRD exists", "kind", k.String())
	}
	return nil
}

// refresh checks a CRD with an uncached read. It reports whether its
// presence changed.
func (w *childWatches) refresh(ctx context.Context, crdName string) (bool, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := w.mgr.GetAPIReader().Get(ctx, types.NamespacedName{Name: crdName}, crd)
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

// forCRD maps a CRD event to every InferenceService when an optional CRD
// appears or goes: those that need the kind can now proceed, or must report
// it. The kind's watch starts when its CRD appears.
func (r *Reconciler) forCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	for _, k := range registry.Kinds() {
		if obj.GetName() != k.CRD {
			continue
		}
		changed, err := r.watches.refresh(ctx, k.CRD)
		if err != nil {
			log.FromContext(ctx).Error(err, "Check an optional CRD", "crd", k.CRD)
			return nil
		}
		// Not here: while the controller starts, it holds the lock Watch
		// takes and waits for this very handler's source to sync.
		go func() {
			if err := r.watches.watch(context.WithoutCancel(ctx), k); err != nil {
				log.FromContext(ctx).Error(err, "Watch an optional kind", "kind", k.String())
			}
		}()
		if changed {
			return r.allInferenceServices(ctx)
		}
	}
	return nil
}

// statusSignalChanged lets through creates, deletes, and the updates that
// change a child's metadata or spec (drift Serval repairs) or what Serval
// reads of its status (kinds.Kind.StatusSignal).
func statusSignalChanged(signal func(client.Object) string) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!maps.Equal(o.GetLabels(), n.GetLabels()) || !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
			!reflect.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
			o.GetDeletionTimestamp() != n.GetDeletionTimestamp() ||
			signal(o) != signal(n)
	}}
}
