package inferenceservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// SetupWithManager registers the reconciler, its field index and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1beta1.InferenceService{}, runtimeIndex, runtimeIndexValues); err != nil {
		return err
	}
	r.pipeline = pipeline.New(mgr, &v1beta1.InferenceService{}, r.Applier, r.Recorder)
	r.credentials = credentials.NewMemo()
	r.status = newStatusWriter(mgr.GetClient())
	r.caBundles = &cabundle.Copier{Client: mgr.GetClient(), Namespace: r.Config.Key().Namespace}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("inferenceservice").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Concurrency, 1), RateLimiter: pipeline.RateLimiter()}).
		// Spec, annotation and label changes matter (visibility is a label);
		// status writes, ours included, do not.
		For(&v1beta1.InferenceService{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		// The child kinds are watched from the child kinds' registry (watches.go); the
		// optional ones from when their CRD exists.
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.forCRD)).
		Watches(&v1alpha1.ServingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.forRuntime)).
		Watches(&v1alpha1.ClusterServingRuntime{}, handler.EnqueueRequestsFromMapFunc(r.forRuntime)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.forConfig)).
		// A storage container may now download (or no longer download) a
		// model's URI: rare, and cheap to check, so every InferenceService.
		Watches(&v1alpha1.ClusterStorageContainer{}, handler.EnqueueRequestsFromMapFunc(r.forStorageContainer)).
		// A storage-config Secret created (or changed) after the services
		// that read it: the metadata of that name only.
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(StorageConfigSecrets()), handler.EnqueueRequestsFromMapFunc(r.forStorageConfigSecret))).
		// A model cache made, deleted or done downloading moves the
		// services of its URI onto it or off it.
		Watches(&v1alpha1.LocalModelCache{}, handler.EnqueueRequestsFromMapFunc(r.forModelCache), builder.WithPredicates(localmodel.CacheChanged)).
		Watches(&v1alpha1.LocalModelNamespaceCache{}, handler.EnqueueRequestsFromMapFunc(r.forModelCache), builder.WithPredicates(localmodel.CacheChanged)).
		// Pod states (a crash-looping storage initializer) explain readiness;
		// only an event that changes what a pod tells the status counts. It
		// waits its turn (unlike a child's change): what a pod tells is on its
		// way to Ready, which the Deployment's status says first.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pipeline.ByOwnerLabel(v1beta1.InferenceServiceLabel)), builder.WithPredicates(workload.PodSignalChanged)).
		Build(r)
	if err != nil {
		return err
	}
	return r.pipeline.Watches.Start(ctx, c)
}

// WatchedObjects are the kinds the controller watches from its start, as
// empty objects: its own inputs and the child kinds every cluster serves (the
// optional kinds come and go with their CRDs).
func WatchedObjects() []client.Object {
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	objs := []client.Object{&v1beta1.InferenceService{}, crds, &v1alpha1.ServingRuntime{}, &v1alpha1.ClusterServingRuntime{},
		&v1alpha1.ClusterStorageContainer{}, StorageConfigSecrets(), &corev1.ConfigMap{}, &corev1.Pod{},
		&v1alpha1.LocalModelCache{}, &v1alpha1.LocalModelNamespaceCache{}}
	for _, k := range childkinds.All() {
		if !k.Optional() {
			objs = append(objs, k.New())
		}
	}
	return objs
}

// forRuntime maps a runtime to the InferenceServices that use it, name it,
// or, unresolved, have a model format it serves.
func (r *Reconciler) forRuntime(ctx context.Context, obj client.Object) []reconcile.Request {
	var spec *v1alpha1.ServingRuntimeSpec
	var keys []string
	switch rt := obj.(type) {
	case *v1alpha1.ServingRuntime:
		spec = &rt.Spec
		keys = append(keys, usesKey("ServingRuntime", rt.Namespace+"/"+rt.Name))
	case *v1alpha1.ClusterServingRuntime:
		spec = &rt.Spec
		keys = append(keys, usesKey("ClusterServingRuntime", rt.Name))
	default:
		return nil
	}
	keys = append(keys, namedKey(obj.GetName()))
	for _, f := range spec.SupportedModelFormats {
		keys = append(keys, formatKey(f.Name))
	}
	seen := map[types.NamespacedName]bool{}
	var reqs []reconcile.Request
	for _, key := range keys {
		opts := []client.ListOption{client.MatchingFields{runtimeIndex: key}}
		if obj.GetNamespace() != "" {
			// A namespaced runtime only serves its own namespace.
			opts = append(opts, client.InNamespace(obj.GetNamespace()))
		}
		list := &v1beta1.InferenceServiceList{}
		if err := r.Client.List(ctx, list, opts...); err != nil {
			log.FromContext(ctx).Error(err, "List InferenceServices for a runtime", "runtime", obj.GetName())
			continue
		}
		for _, isvc := range list.Items {
			n := types.NamespacedName{Namespace: isvc.Namespace, Name: isvc.Name}
			if !seen[n] {
				seen[n] = true
				reqs = append(reqs, reconcile.Request{NamespacedName: n})
			}
		}
	}
	return reqs
}

// forConfig re-enqueues every InferenceService when serval-config changes
// (every key can change what any of them renders) or Knative's
// config-features does (a Knative-mode component may now be accepted).
func (r *Reconciler) forConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	if key := client.ObjectKeyFromObject(obj); key != r.Config.Key() && key != r.KnativeFeatures.Key() && !r.isCABundle(ctx, key) {
		return nil
	}
	return r.allInferenceServices(ctx)
}

// isCABundle reports whether key is the storage initializer's CA bundle
// ConfigMap that serval-config names: its copies follow it.
func (r *Reconciler) isCABundle(ctx context.Context, key types.NamespacedName) bool {
	if key.Namespace != r.Config.Key().Namespace {
		return false
	}
	cfg, _, err := r.Config.Snapshot(ctx)
	return err == nil && cfg.StorageInitializer.CABundleConfigMapName == key.Name
}

// forStorageContainer re-enqueues every InferenceService when a
// ClusterStorageContainer changes.
func (r *Reconciler) forStorageContainer(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.allInferenceServices(ctx)
}

// StorageConfigSecrets is the metadata-only object the cache watches the
// storage-config Secrets as.
func StorageConfigSecrets() *metav1.PartialObjectMetadata {
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return secrets
}

// forStorageConfigSecret enqueues the InferenceServices of the Secret's
// namespace whose model is given as storage: {key, path}: they read it.
func (r *Reconciler) forStorageConfigSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &v1beta1.InferenceServiceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "List InferenceServices for a storage-config Secret", "namespace", obj.GetNamespace())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		d := list.Items[i].DeepCopy()
		v1beta1.Default(d)
		if readsStorageConfig(d) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// forModelCache enqueues the InferenceServices whose model a cache may
// hold.
func (r *Reconciler) forModelCache(ctx context.Context, obj client.Object) []reconcile.Request {
	c := obj.(v1alpha1.ModelCache)
	list := &v1beta1.InferenceServiceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(c.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "List InferenceServices for a model cache", "cache", c.GetName())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		d := list.Items[i].DeepCopy()
		v1beta1.Default(d)
		if localmodel.Concerns(c, d.Namespace, components.StorageURIOf(d)) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// allInferenceServices lists every InferenceService as requests.
func (r *Reconciler) allInferenceServices(ctx context.Context) []reconcile.Request {
	return pipeline.Requests(ctx, r.Client, &v1beta1.InferenceServiceList{})
}
