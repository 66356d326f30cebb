package knative

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serval-dev/serval/pkg/controller/workload"
)

// FeaturesStore hands out Knative's feature flags, read from config-features
// in the informer cache and parsed once per version of the ConfigMap.
type FeaturesStore struct {
	reader client.Reader
	key    types.NamespacedName

	mu       sync.Mutex
	version  string
	features *Features
}

// NewFeaturesStore reads config-features in namespace (Knative Serving's)
// through reader, the manager's cached client.
func NewFeaturesStore(reader client.Reader, namespace string) *FeaturesStore {
	return &FeaturesStore{reader: reader, key: types.NamespacedName{Namespace: namespace, Name: FeaturesConfigMap}}
}

// Key is the ConfigMap the store reads.
func (s *FeaturesStore) Key() types.NamespacedName { return s.key }

// Snapshot returns the flags in force: Knative's defaults when the ConfigMap
// is absent or does not parse (Knative itself then keeps its last good ones,
// which Serval cannot see; the defaults are the safer guess).
func (s *FeaturesStore) Snapshot(ctx context.Context) (*Features, error) {
	cm := &corev1.ConfigMap{}
	err := s.reader.Get(ctx, s.key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{}
	} else if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s: %w", s.key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.features != nil && cm.ResourceVersion == s.version {
		return s.features, nil
	}
	f, err := ParseFeatures(cm.Data)
	if err != nil {
		log.FromContext(ctx).Error(err, "Knative's config-features does not parse; assuming Knative's defaults", "configMap", s.key)
		f, _ = ParseFeatures(nil)
	}
	s.version, s.features = cm.ResourceVersion, f
	return f, nil
}

// Cluster is what a mode needs to know of the cluster: the flags in force
// and where they were read.
func (s *FeaturesStore) Cluster(ctx context.Context) (workload.Cluster, error) {
	f, err := s.Snapshot(ctx)
	if err != nil {
		return workload.Cluster{}, err
	}
	return workload.Cluster{KnativeFeatures: f, KnativeFeaturesSource: s.key.String()}, nil
}
