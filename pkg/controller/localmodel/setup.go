package localmodel

import (
	"context"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
)

// SetupWithManager registers the reconciler and its watches: its caches,
// their children (through the pipeline), the nodes (a node joining or
// leaving a group), the node lists' reports, the groups, and the services
// that may start or stop using a cache.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.pipeline = pipeline.New(mgr, r.newCache(), r.Applier, r.Recorder)
	r.status = newCacheStatusWriter(mgr.GetClient())
	r.credentials = credentials.NewMemo()
	name := "localmodelcache"
	if r.Namespaced {
		name = "localmodelnamespacecache"
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, RateLimiter: pipeline.RateLimiter()}).
		For(r.newCache(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			deletionStarted))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allCaches), builder.WithPredicates(NodeChanged)).
		Watches(&v1alpha1.LocalModelNode{}, handler.EnqueueRequestsFromMapFunc(r.forNodeList), builder.WithPredicates(statusChanged)).
		Watches(&v1alpha1.LocalModelNodeGroup{}, handler.EnqueueRequestsFromMapFunc(r.allCaches), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1beta1.InferenceService{}, handler.EnqueueRequestsFromMapFunc(r.forService), builder.WithPredicates(serviceChanged)).
		Watches(&v1alpha2.LLMInferenceService{}, handler.EnqueueRequestsFromMapFunc(r.forService), builder.WithPredicates(serviceChanged)).
		Build(r)
	if err != nil {
		return err
	}
	return r.pipeline.Watches.Start(ctx, c)
}

// deletionStarted passes the update that marks an object for deletion.
var deletionStarted = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
}}

// NodeChanged passes what changes a node's membership of a group: its
// arrival or departure, its labels, its readiness.
var NodeChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
	return !reflect.DeepEqual(o.Labels, n.Labels) || nodeReady(o) != nodeReady(n) || !reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints)
}}

// statusChanged passes a node list's new report.
var statusChanged = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !reflect.DeepEqual(e.ObjectOld.(*v1alpha1.LocalModelNode).Status, e.ObjectNew.(*v1alpha1.LocalModelNode).Status)
	},
}

// serviceChanged passes what may change whether a service uses a cache:
// its creation and deletion, its spec, its annotations.
var serviceChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, deletionStarted)

// allCaches enqueues every cache of the reconciler's kind: nodes and groups
// change rarely, and caches are few.
func (r *Reconciler) allCaches(ctx context.Context, _ client.Object) []reconcile.Request {
	var list client.ObjectList = &v1alpha1.LocalModelCacheList{}
	if r.Namespaced {
		list = &v1alpha1.LocalModelNamespaceCacheList{}
	}
	return pipeline.Requests(ctx, r.Client, list)
}

// forNodeList enqueues the caches of the reconciler's kind a node lists.
func (r *Reconciler) forNodeList(_ context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	for _, m := range obj.(*v1alpha1.LocalModelNode).Spec.LocalModels {
		if (m.Namespace != "") == r.Namespaced {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.ModelName}})
		}
	}
	return out
}

// forService enqueues the caches a service's URI matches and those that
// list it as a user: it may have started or stopped using them.
func (r *Reconciler) forService(ctx context.Context, obj client.Object) []reconcile.Request {
	uri := ""
	switch s := obj.(type) {
	case *v1beta1.InferenceService:
		uri = components.StorageURIOf(s)
	case *v1alpha2.LLMInferenceService:
		uri = s.Spec.Model.URI
	}
	me := v1alpha1.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	concerns := func(c v1alpha1.ModelCache) bool {
		st := c.CacheStatus()
		return (uri != "" && v1alpha1.MatchStorageURI(c.CacheSpec().SourceModelUri, uri)) ||
			slices.Contains(st.InferenceServices, me) || slices.Contains(st.LLMInferenceServices, me)
	}
	var out []reconcile.Request
	if r.Namespaced {
		list := &v1alpha1.LocalModelNamespaceCacheList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		for i := range list.Items {
			if concerns(&list.Items[i]) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	}
	list := &v1alpha1.LocalModelCacheList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	for i := range list.Items {
		if concerns(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
