package ingress

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apply"
)

// Builder renders and reads one kind of route.
type Builder interface {
	// Kind is the route object's kind.
	Kind() schema.GroupVersionKind
	// Objects returns the route objects of an external plan.
	Objects(p *Plan) ([]apply.Object, error)
	// Ready reads the live routes: whether they route, and if not, why.
	Ready(ctx context.Context, r client.Reader, p *Plan) (Readiness, error)
}

// Readiness is a route's observed state.
type Readiness struct {
	Ready   bool
	Reason  string
	Message string
}
