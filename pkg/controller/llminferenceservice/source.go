package llminferenceservice

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// source reads a service's presets from the cache (the service's namespace
// first, then Serval's).
type source struct {
	cache     client.Reader
	namespace string
	system    string
}

func (s source) Config(ctx context.Context, name string) (*v1alpha2.LLMInferenceServiceConfig, error) {
	for _, ns := range []string{s.namespace, s.system} {
		cfg := &v1alpha2.LLMInferenceServiceConfig{}
		err := s.cache.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cfg)
		if err == nil {
			return cfg, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, nil
}
