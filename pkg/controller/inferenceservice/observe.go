package inferenceservice

import (
	"context"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// observe reads each component's workload state and the routes' readiness.
func (r *Reconciler) observe(ctx context.Context, s *scope) error {
	s.observed = map[v1beta1.ComponentType]workload.State{}
	for _, c := range s.comps {
		st, err := s.workload.Observe(ctx, s.childReader(r.Client), c)
		if err != nil {
			return err
		}
		s.observed[c.Type] = st
	}
	return r.observeRoutes(ctx, s)
}
