package childwatch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/controller/childwatch"
)

// TestPrioritized: what a child's change asks for goes ahead of the owners'
// own events, except what controller-runtime puts behind everything (an
// informer's first list, a resync).
func TestPrioritized(t *testing.T) {
	owner := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "owner"}}
	other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
	h := childwatch.Prioritized(handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{owner}
	}))
	dep := func(version string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner-predictor", ResourceVersion: version}}
	}
	for _, tc := range []struct {
		name    string
		enqueue func(workqueue.TypedRateLimitingInterface[reconcile.Request])
		want    int
	}{
		{"a child's status changed", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: dep("1"), ObjectNew: dep("2")}, q)
		}, childwatch.ChildPriority},
		{"a child deleted", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(context.Background(), event.DeleteEvent{Object: dep("1")}, q)
		}, childwatch.ChildPriority},
		{"a resync (nothing changed)", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: dep("1"), ObjectNew: dep("1")}, q)
		}, handler.LowPriority},
		{"an informer's first list", func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(context.Background(), event.CreateEvent{Object: dep("1"), IsInInitialList: true}, q)
		}, handler.LowPriority},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := priorityqueue.New[reconcile.Request]("test")
			defer q.ShutDown()
			q.Add(other) // an owner's own event, queued first
			tc.enqueue(q)
			first, priority, _ := q.GetWithPriority()
			if tc.want > 0 {
				assert.Equal(t, owner, first, "served before the owner's own event")
			}
			if first != owner {
				q.Done(first)
				first, priority, _ = q.GetWithPriority()
			}
			require.Equal(t, owner, first)
			assert.Equal(t, tc.want, priority)
		})
	}
}

// TestPrioritizedOnAPlainQueue: a queue without priorities gets the items
// as they are.
func TestPrioritizedOnAPlainQueue(t *testing.T) {
	owner := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "owner"}}
	h := childwatch.Prioritized(handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{owner}
	}))
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: &appsv1.Deployment{}, ObjectNew: &appsv1.Deployment{}}, q)
	got, _ := q.Get()
	assert.Equal(t, owner, got)
}
