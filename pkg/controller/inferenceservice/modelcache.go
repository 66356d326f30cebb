package inferenceservice

import (
	"context"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
)

// modelCache is the cached copy the predictor's model is mounted from; nil
// for none. A cache still downloading stops the run, and the predictor
// says why it waits.
func (r *Reconciler) modelCache(ctx context.Context, s *scope) (*components.ModelCache, error) {
	mc, waiting, err := localmodel.Resolve(ctx, r.Client, components.StorageURIOf(s.defaulted), s.isvc.Namespace, s.isvc.Annotations)
	if waiting != nil {
		s.fail(v1beta1.PredictorComponent, waiting.Reason, waiting.Message)
	}
	return mc, err
}
