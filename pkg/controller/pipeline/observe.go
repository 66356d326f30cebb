package pipeline

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// Observe reads each component's workload and, when routes were rendered,
// their readiness, through r: the cache, or what Run read after applying.
// An owner that renders nothing this time (a graph waiting for its
// services) calls it alone, to report what runs.
func (p *Pipeline) Observe(ctx context.Context, r client.Reader, req Request, out *Outcome) error {
	out.Observed = map[v1beta1.ComponentType]workload.State{}
	for _, c := range req.Components {
		st, err := req.Mode.Observe(ctx, r, c)
		if err != nil {
			return err
		}
		if c.Split != nil {
			if out.Splits == nil {
				out.Splits = map[string]workload.State{}
			}
			out.Splits[c.Name] = st
			continue
		}
		out.Observed[c.Type] = st
	}
	if out.Router == nil {
		return nil
	}
	readiness, err := out.Router.Ready(ctx, r, req.Plan, out.Observed[req.Plan.Top.Component])
	if err != nil {
		return fmt.Errorf("read the routes: %w", err)
	}
	out.Routes = readiness
	return nil
}
