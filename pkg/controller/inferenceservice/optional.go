package inferenceservice

import (
	"context"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/ingress/gatewayapi"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/workload/knative"
)

// optionalKind is a child kind whose CRD may be absent.
type optionalKind struct {
	crd  string
	gvk  schema.GroupVersionKind
	make func() client.Object
}

// optionalKinds are watched only while their CRD exists: a watch on a kind
// without its CRD fails cache sync and would stop the manager.
var optionalKinds = []optionalKind{
	{crd: "httproutes.gateway.networking.k8s.io", gvk: gatewayapi.HTTPRouteKind, make: func() client.Object { return &gatewayv1.HTTPRoute{} }},
	{crd: "services.serving.knative.dev", gvk: knative.ServiceKind, make: func() client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(knative.ServiceKind)
		return u
	}},
}

// optionalWatches tracks which optional CRDs exist and starts the watch on a
// kind when its CRD appears.
type optionalWatches struct {
	mgr  manager.Manager
	ctrl controller.Controller

	mu       sync.Mutex
	present  map[schema.GroupVersionKind]bool
	watching map[schema.GroupVersionKind]bool
}

func newOptionalWatches(mgr manager.Manager) *optionalWatches {
	return &optionalWatches{mgr: mgr, present: map[schema.GroupVersionKind]bool{}, watching: map[schema.GroupVersionKind]bool{}}
}

// Present reports whether the kind's CRD exists.
func (o *optionalWatches) Present(gvk schema.GroupVersionKind) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.present[gvk]
}

// refresh checks a CRD with an uncached read and starts the kind's watch the
// first time the CRD exists. It reports whether anything changed.
func (o *optionalWatches) refresh(ctx context.Context, k optionalKind) (bool, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := o.mgr.GetAPIReader().Get(ctx, types.NamespacedName{Name: k.crd}, crd)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	exists := err == nil && crd.DeletionTimestamp == nil
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := o.present[k.gvk] != exists
	o.present[k.gvk] = exists
	if exists && !o.watching[k.gvk] && o.ctrl != nil {
		src := source.Kind(o.mgr.GetCache(), k.make(), handler.EnqueueRequestForOwner(
			o.mgr.GetScheme(), o.mgr.GetRESTMapper(), &v1beta1.InferenceService{}, handler.OnlyControllerOwner()))
		if err := o.ctrl.Watch(src); err != nil {
			return changed, err
		}
		o.watching[k.gvk] = true
		log.FromContext(ctx).Info("Watching an optional kind now that its CRD exists", "kind", k.gvk.Kind)
	}
	return changed, nil
}

// forCRD maps a CRD event to every InferenceService when an optional CRD
// appears or goes: those that need the kind can now proceed, or must report it.
func (r *Reconciler) forCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	for _, k := range optionalKinds {
		if obj.GetName() != k.crd {
			continue
		}
		changed, err := r.optional.refresh(ctx, k)
		if err != nil {
			log.FromContext(ctx).Error(err, "Check an optional CRD", "crd", k.crd)
			return nil
		}
		if changed {
			return r.allInferenceServices(ctx)
		}
	}
	return nil
}
