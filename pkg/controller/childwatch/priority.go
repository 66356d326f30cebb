package childwatch

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ChildPriority is the queue priority of the reconciles that a child's
// change (or a pod's) asks for: above the owners' own events, priority 0.
// In a rollout of many InferenceServices, the reconcile that writes Ready
// for one whose Deployment just became available then goes before the first
// reconciles of those created after it, and each goes Ready when Kubernetes
// makes it so rather than after the whole queue of creations. Such
// reconciles are short (nothing to create, a status patch at most), and a
// rollout brings a few of them per owner.
const ChildPriority = 10

// Prioritized enqueues what h enqueues at ChildPriority, unless h sets a
// priority itself (controller-runtime's low priority for an informer's first
// list and for resyncs). On a queue without priorities it changes nothing.
func Prioritized[T client.Object](h handler.TypedEventHandler[T, reconcile.Request]) handler.TypedEventHandler[T, reconcile.Request] {
	return prioritized[T]{h}
}

type prioritized[T client.Object] struct {
	h handler.TypedEventHandler[T, reconcile.Request]
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (p prioritized[T]) Create(ctx context.Context, e event.TypedCreateEvent[T], q queue) {
	p.h.Create(ctx, e, withChildPriority(q))
}

func (p prioritized[T]) Update(ctx context.Context, e event.TypedUpdateEvent[T], q queue) {
	p.h.Update(ctx, e, withChildPriority(q))
}

func (p prioritized[T]) Delete(ctx context.Context, e event.TypedDeleteEvent[T], q queue) {
	p.h.Delete(ctx, e, withChildPriority(q))
}

func (p prioritized[T]) Generic(ctx context.Context, e event.TypedGenericEvent[T], q queue) {
	p.h.Generic(ctx, e, withChildPriority(q))
}

func withChildPriority(q queue) queue {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	return childPriorityQueue{pq}
}

// childPriorityQueue adds at ChildPriority what is added with no priority.
type childPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

func (q childPriorityQueue) Add(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{}, item)
}

func (q childPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = ptr.To(ChildPriority)
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}
