package pipeline

import (
	"context"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// IndexChildren adds the owner index (owner.Index) to the manager's cache,
// once for every owner kind: on Pods and on the child kinds every cluster
// serves. The observe and prune steps read children by it.
func IndexChildren(ctx context.Context, indexer client.FieldIndexer) error {
	objs := []client.Object{&corev1.Pod{}}
	for _, k := range IndexedKinds() {
		objs = append(objs, k.New())
	}
	for _, obj := range objs {
		if err := indexer.IndexField(ctx, obj, owner.Index, owner.IndexValue); err != nil {
			return err
		}
	}
	return nil
}

// IndexedKinds are the child kinds that have the owner index: those whose
// CRD is always there. An optional kind's informer may start after the
// manager (when its CRD appears), too late to add an index; its objects are
// listed by label.
func IndexedKinds() []kinds.Kind {
	var out []kinds.Kind
	for _, k := range childkinds.All() {
		if !k.Optional() {
			out = append(out, k)
		}
	}
	return out
}

// The retry delays of a failed reconcile: exponential from MinRetryDelay,
// capped at MaxRetryDelay (controller-runtime's default cap is 1000 s: an
// item that failed during an outage would wait minutes after it ends).
const (
	MinRetryDelay = 100 * time.Millisecond
	MaxRetryDelay = 10 * time.Second
)

// RateLimiter is every owner controller's rate limiter: per item, the
// bounded exponential delay above; overall, controller-runtime's default
// bucket.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](MinRetryDelay, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
