package inferencegraph

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// serviceIndex indexes graphs by the InferenceServices they name.
const serviceIndex = "spec.serviceNames"

// SetupWithManager registers the reconciler. The graphs' children live in
// the manager's cache with every other owner kind's (pipeline.IndexChildren
// has indexed them).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.InferenceGraph{}, serviceIndex, func(obj client.Object) []string {
		return ServiceNames(&obj.(*v1alpha1.InferenceGraph).Spec)
	}); err != nil {
		return err
	}
	r.pipeline = pipeline.New(mgr, &v1alpha1.InferenceGraph{}, r.Applier, r.Recorder)
	r.status = &statuswriter.Writer[v1alpha1.InferenceGraphStatus]{Client: mgr.GetClient(),
		Status:     func(o client.Object) *v1alpha1.InferenceGraphStatus { return &o.(*v1alpha1.InferenceGraph).Status },
		Conditions: func(st *v1alpha1.InferenceGraphStatus) *[]metav1.Condition { return &st.Conditions }}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("inferencegraph").
		WithOptions(controller.Options{RateLimiter: pipeline.RateLimiter()}).
		For(&v1alpha1.InferenceGraph{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1beta1.InferenceService{}, handler.EnqueueRequestsFromMapFunc(r.forService), builder.WithPredicates(serviceSignalChanged)).
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.forCRD)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.forConfig)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pipeline.ByOwnerLabel(v1alpha1.InferenceGraphLabel)), builder.WithPredicates(workload.PodSignalChanged)).
		Build(r)
	if err != nil {
		return err
	}
	return r.pipeline.Watches.Start(ctx, c)
}

// serviceSignal is what a graph reads of an InferenceService: its
// readiness, address and protocol.
func serviceSignal(obj client.Object) string {
	isvc, ok := obj.(*v1beta1.InferenceService)
	if !ok {
		return ""
	}
	sig := string(isvc.Status.ProtocolVersion)
	if isvc.Status.Address != nil {
		sig += "|" + isvc.Status.Address.URL
	}
	if c := meta.FindStatusCondition(isvc.Status.Conditions, v1beta1.ConditionReady); c != nil {
		sig += "|" + string(c.Status) + "|" + c.Reason
	}
	return sig
}

var serviceSignalChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool { return serviceSignal(e.ObjectOld) != serviceSignal(e.ObjectNew) },
}

// forService maps an InferenceService to the graphs that name it.
func (r *Reconciler) forService(ctx context.Context, obj client.Object) []reconcile.Request {
	return pipeline.Requests(ctx, r.Client, &v1alpha1.InferenceGraphList{},
		client.InNamespace(obj.GetNamespace()), client.MatchingFields{serviceIndex: obj.GetName()})
}

// forCRD re-enqueues every graph when an optional CRD appears or goes.
func (r *Reconciler) forCRD(ctx context.Context, obj client.Object) []reconcile.Request {
	if r.pipeline.Watches.CRDChanged(ctx, obj) {
		return r.allGraphs(ctx)
	}
	return nil
}

// forConfig re-enqueues every graph when serval-config or Knative's
// config-features changes.
func (r *Reconciler) forConfig(ctx context.Context, obj client.Object) []reconcile.Request {
	if key := client.ObjectKeyFromObject(obj); key != r.Config.Key() && key != r.KnativeFeatures.Key() {
		return nil
	}
	return r.allGraphs(ctx)
}

func (r *Reconciler) allGraphs(ctx context.Context) []reconcile.Request {
	return pipeline.Requests(ctx, r.Client, &v1alpha1.InferenceGraphList{})
}
