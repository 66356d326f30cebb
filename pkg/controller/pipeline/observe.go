package pipeline

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Observe reads what the request's components and routes run through r,
// without rendering or applying: an owner that renders nothing this time
// (a graph waiting for its services) calls it to report what runs. Routes
// are read only when out names the router that rendered them.
func (p *Pipeline) Observe(ctx context.Context, r client.Reader, req Request, out *Outcome) error {
	return observe(ctx, r, builtIn(&req, p.Watches.Present, out), out)
}

// observe lets each producer read back what it made, through r.
func observe(ctx context.Context, r client.Reader, producers []Producer, out *Outcome) error {
	out.Observed = map[v1beta1.ComponentType]workload.State{}
	for _, pr := range producers {
		if err := pr.Observe(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
