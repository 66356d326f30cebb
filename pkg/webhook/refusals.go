package webhook

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// RefusalsMetric counts the requests admission refused, by kind and
// operation. controller-runtime's own webhook metrics count HTTP answers, and
// a refusal is an HTTP 200 carrying allowed=false: without this counter a
// dashboard cannot tell a refused apply from an admitted one.
const RefusalsMetric = "serval_admission_refusals_total"

var refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: RefusalsMetric,
	Help: "Requests Serval's validating webhooks refused, by kind and operation (CREATE, UPDATE, DELETE).",
}, []string{"kind", "operation"})

// RegisterMetrics registers the webhooks' metrics with reg, once per
// process (the manager's shared registry).
func RegisterMetrics(reg prometheus.Registerer) error { return reg.Register(refusals) }

// counted is a validator whose refusals are counted under its kind. Every
// series is created at zero when the webhook is set up, so that a rate over
// it exists before the first refusal.
type counted[T runtime.Object] struct {
	admission.Validator[T]
	kind string
}

func countRefusals[T runtime.Object](kind string, v admission.Validator[T]) admission.Validator[T] {
	for _, op := range []string{"CREATE", "UPDATE", "DELETE"} {
		refusals.WithLabelValues(kind, op)
	}
	return counted[T]{Validator: v, kind: kind}
}

func (c counted[T]) count(op string, w admission.Warnings, err error) (admission.Warnings, error) {
	if err != nil {
		refusals.WithLabelValues(c.kind, op).Inc()
	}
	return w, err
}

// ValidateCreate implements admission.Validator.
func (c counted[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	w, err := c.Validator.ValidateCreate(ctx, obj)
	return c.count("CREATE", w, err)
}

// ValidateUpdate implements admission.Validator.
func (c counted[T]) ValidateUpdate(ctx context.Context, oldObj, newObj T) (admission.Warnings, error) {
	w, err := c.Validator.ValidateUpdate(ctx, oldObj, newObj)
	return c.count("UPDATE", w, err)
}

// ValidateDelete implements admission.Validator.
func (c counted[T]) ValidateDelete(ctx context.Context, obj T) (admission.Warnings, error) {
	w, err := c.Validator.ValidateDelete(ctx, obj)
	return c.count("DELETE", w, err)
}
