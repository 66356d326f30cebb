package llminferenceservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// SetupWithManager registers the reconciler and its watches: the services,
// the other members of their routing groups, their children (through the
// pipeline), the presets, serval-config, the optional CRDs, and the model
// and picker pods.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha2.LLMInferenceService{}, groupIndex, indexGroup); err != nil {
		return err
	}
	r.pipeline = pipeline.New(mgr, &v1alpha2.LLMInferenceService{}, r.Applier, r.Recorder)
	r.status = &statuswriter.Writer[v1alpha2.LLMInferenceServiceStatus]{Client: mgr.GetClient(),
		Status: func(o client.Object) *v1alpha2.LLMInferenceServiceStatus {
			return &o.(*v1alpha2.LLMInferenceService).Status
		},
		Conditions: func(st *v1alpha2.LLMInferenceServiceStatus) *[]metav1.Condition { return &st.Conditions }}
	r.certs = &servingcert.Keeper{Reader: r.APIReader}
	r.credentials = credentials.NewMemo()
	r.caBundles = &cabundle.Copier{Client: mgr.GetClient(), Namespace: r.Namespace}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("llminferenceservice").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Concurrency, 1), RateLimiter: pipeline.RateLimiter()}).
		For(&v1alpha2.LLMInferenceService{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1alpha2.LLMInferenceService{}, groupFanOut{r}).
		// A preset's spec concerns its services; its status and finalizer
		// (written by the preset controller as services come and go) do not.
		Watches(&v1alpha2.LLMInferenceServiceConfig{}, handler.EnqueueRequestsFromMapFunc(r.forConfig),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.forCRD)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.forServalConfig)).
		Watches(&v1alpha1.LocalModelCache{}, handler.EnqueueRequestsFromMapFunc(r.forModelCache), builder.WithPredicates(localmodel.CacheChanged)).
		Watches(&v1alpha1.LocalModelNamespaceCache{}, handler.EnqueueRequestsFromMapFunc(r.forModelCache), builder.WithPredicates(localmodel.CacheChanged)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pipeline.ByOwnerLabel(v1alpha2.LLMInferenceServiceLabel)), builder.WithPredicates(workload.PodSignalChanged)).
		Build(r)
	if err != nil {
		return err
	}
	return r.pipeline.Watches.Start(ctx, c)
}

// forConfig re-enqueues the services a preset's change may concern: those
// of its namespace, or every service when it is one of Serval's (the
// well-known presets). Presets change rarely; a list is cheap.
func (r *Reconciler) forConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	var opts []client.ListOption
	if obj.GetNamespace() != r.Namespace {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	return r.services(ctx, opts...)
}

// forModelCache re-enqueues the services whose model a cache may hold: a
// cache made, deleted or done downloading moves them onto it or off it.
func (r *Reconciler) forModelCache(ctx context.Context, obj client.Object) []reconcile.Request {
	c := obj.(v1alpha1.ModelCache)
	list := &v1alpha2.LLMInferenceServiceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(c.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if localmodel.Concerns(c, list.Items[i].Namespace, list.Items[i].Spec.Model.URI) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// forCRD re-enqueues every service when an optional CRD appears or goes.
func (r *Reconciler) forCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	if r.pipeline.Watches.CRDChanged(ctx, obj) {
		return r.services(ctx)
	}
	return nil
}

// forServalConfig re-enqueues every service when serval-config changes.
func (r *Reconciler) forServalConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	if client.ObjectKeyFromObject(obj) != r.Config.Key() {
		return nil
	}
	return r.services(ctx)
}

func (r *Reconciler) services(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	return pipeline.Requests(ctx, r.Client, &v1alpha2.LLMInferenceServiceList{}, opts...)
}
