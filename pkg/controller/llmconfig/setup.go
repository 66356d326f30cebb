package llmconfig

import (
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/statuswriter"
)

// UsersSettle is how long a preset waits after a service starts or stops
// using it before its status is written: the changes of a burst (300
// services created at once, each using the same well-known presets) come
// to one write per preset, not one per service.
const UsersSettle = 5 * time.Second

// SetupWithManager registers the reconciler: the presets, and the services
// whose use of presets changes.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha2.LLMInferenceService{}, usersIndex, func(o client.Object) []string {
		return Uses(o.(*v1alpha2.LLMInferenceService), r.Namespace)
	}); err != nil {
		return err
	}
	r.status = &statuswriter.Writer[v1alpha2.LLMInferenceServiceConfigStatus]{Client: mgr.GetClient(),
		Status: func(o client.Object) *v1alpha2.LLMInferenceServiceConfigStatus {
			return &o.(*v1alpha2.LLMInferenceServiceConfig).Status
		},
		Conditions: func(st *v1alpha2.LLMInferenceServiceConfigStatus) *[]metav1.Condition { return &st.Conditions }}
	return ctrl.NewControllerManagedBy(mgr).
		Named("llminferenceserviceconfig").
		WithOptions(controller.Options{RateLimiter: pipeline.RateLimiter()}).
		For(&v1alpha2.LLMInferenceServiceConfig{}).
		Watches(&v1alpha2.LLMInferenceService{}, usersChanged{r}).
		Complete(r)
}

// usersChanged enqueues, UsersSettle later, the presets a service starts
// or stops using: when it is made or deleted, and when an update changes
// the presets it uses (its status's record of them, most often).
type usersChanged struct{ r *Reconciler }

var _ handler.EventHandler = usersChanged{}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (h usersChanged) Create(_ context.Context, e event.CreateEvent, q queue) {
	h.enqueue(q, e.Object)
}

func (h usersChanged) Update(_ context.Context, e event.UpdateEvent, q queue) {
	old, cur := e.ObjectOld.(*v1alpha2.LLMInferenceService), e.ObjectNew.(*v1alpha2.LLMInferenceService)
	if slices.Equal(Uses(old, h.r.Namespace), Uses(cur, h.r.Namespace)) {
		return
	}
	h.enqueue(q, old)
	h.enqueue(q, cur)
}

func (h usersChanged) Delete(_ context.Context, e event.DeleteEvent, q queue) {
	h.enqueue(q, e.Object)
}

func (h usersChanged) Generic(context.Context, event.GenericEvent, queue) {}

func (h usersChanged) enqueue(q queue, obj client.Object) {
	svc, ok := obj.(*v1alpha2.LLMInferenceService)
	if !ok {
		return
	}
	for _, key := range h.r.presetsOf(svc) {
		q.AddAfter(reconcile.Request{NamespacedName: key}, UsersSettle)
	}
}
