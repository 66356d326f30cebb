package llminferenceservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// source reads a service's presets from the cache (the service's namespace
// first, then Serval's). A scheduler config's ConfigMap (config.ref) is
// refused at admission: the manager may read no ConfigMap outside its own
// namespace; ConfigMap answers as if there were none.
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

func (s source) ConfigMap(context.Context, string) (*corev1.ConfigMap, error) { return nil, nil }
