package config

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Store hands out config snapshots read from the informer cache. It parses
// the ConfigMap once per resourceVersion; a bad value produces an Event naming
// the key, and the last good config stays in force.
type Store struct {
	reader   client.Reader
	key      types.NamespacedName
	recorder events.EventRecorder

	mu      sync.Mutex
	version string
	current *Config
	errs    []KeyError
}

// NewStore returns a Store reading the ConfigMap serval-config in namespace
// through reader (the manager's cached client). recorder may be nil.
func NewStore(reader client.Reader, namespace string, recorder events.EventRecorder) *Store {
	return &Store{
		reader:   reader,
		key:      types.NamespacedName{Namespace: namespace, Name: ConfigMapName},
		recorder: recorder,
		current:  Default(),
	}
}

// Key is the ConfigMap the store reads.
func (s *Store) Key() types.NamespacedName { return s.key }

// Snapshot returns the config in force and the problems of the latest
// ConfigMap version, if it was rejected. An absent ConfigMap means defaults.
func (s *Store) Snapshot(ctx context.Context) (*Config, []KeyError, error) {
	cm := &corev1.ConfigMap{}
	err := s.reader.Get(ctx, s.key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{}
	} else if err != nil {
		return nil, nil, fmt.Errorf("read ConfigMap %s: %w", s.key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cm.ResourceVersion == s.version && s.current != nil {
		return s.current, s.errs, nil
	}
	s.version = cm.ResourceVersion
	cfg, errs := Parse(cm.Data)
	s.errs = errs
	if len(errs) == 0 {
		s.current = cfg
	} else if s.recorder != nil && cm.Name != "" {
		s.recorder.Eventf(cm, nil, corev1.EventTypeWarning, "InvalidConfig", "Parse",
			"kept the last good configuration: %s", joinErrors(errs))
	}
	return s.current, s.errs, nil
}

func joinErrors(errs []KeyError) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Describe joins key errors into one message for a condition.
func Describe(errs []KeyError) string { return joinErrors(errs) }

// InForce returns the config in force, or the defaults while no valid
// ConfigMap has been read: for the controllers whose keys are few and
// whose users see a problem in the manager's Events (the model caches and
// their agents), rather than stop.
func (s *Store) InForce(ctx context.Context) (*Config, error) {
	cfg, _, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return Default(), nil
	}
	return cfg, nil
}
