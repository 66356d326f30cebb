package pipeline

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/serval-dev/serval/pkg/apply"
)

// Requests lists owners (list is an empty list of their kind; opts narrow
// it) as reconcile requests: what an event that concerns many of them
// enqueues. A failed list is logged and enqueues none.
func Requests(ctx context.Context, c client.Reader, list client.ObjectList, opts ...client.ListOption) []reconcile.Request {
	if err := c.List(ctx, list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "List owners to re-enqueue")
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		log.FromContext(ctx).Error(err, "Read the list of owners")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(items))
	for _, item := range items {
		if o, ok := item.(client.Object); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}})
		}
	}
	return reqs
}

// ByOwnerLabel maps an object (a pod) to the owner its label names.
func ByOwnerLabel(label string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		name := obj.GetLabels()[label]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
	}
}

// StaleRetryInterval is when a reconcile whose write met a newer version
// (409 Conflict) runs again, if no watch event brings it sooner.
const StaleRetryInterval = time.Second

// Result is a reconcile's answer once its status is written: err, and the
// apply failures a retry may fix (all but the API server's rejections,
// which wait for a change), retried with backoff; a stale read retried
// quietly after StaleRetryInterval.
func (o *Outcome) Result(err error) (ctrl.Result, error) {
	if err == nil {
		err = o.RetryError()
	}
	if err == nil && o.Stale {
		return ctrl.Result{RequeueAfter: StaleRetryInterval}, nil
	}
	return ctrl.Result{}, err
}

// RetryError joins the apply failures a retry may fix (all but the API
// server's rejections, which wait for a change of what is rendered), so
// that they are retried with backoff; nil when there are none.
func (o *Outcome) RetryError() error {
	var errs []error
	for _, f := range o.ApplyFailures {
		if !f.Permanent() {
			errs = append(errs, f)
		}
	}
	return errors.Join(errs...)
}

// FirstFailure is what stopped or refused a run, for an owner that reports
// one problem: the failure that stopped it, else an apply failure; nil
// when everything was applied.
func (o *Outcome) FirstFailure() *apply.Failure {
	if f := o.Failure; f != nil {
		return &apply.Failure{Err: errors.New(f.Message)}
	}
	for _, f := range o.ApplyFailures {
		return &f
	}
	return nil
}
