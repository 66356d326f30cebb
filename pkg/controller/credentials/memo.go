package credentials

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TTL is how long the Secrets of a ServiceAccount are reused before they
// are read again.
const TTL = 30 * time.Second

// Memo remembers, for a short while, the Secrets attached to a
// ServiceAccount. Every reconcile of an InferenceService or an
// LLMInferenceService that downloads a model needs them; reading them each time cost two requests per
// InferenceService as it rolls out (more for a namespace of many), and
// caching every ServiceAccount and Secret of the cluster would cost memory
// and cluster-wide rights for objects Serval rarely needs. Nothing watches
// ServiceAccounts, so a credential attached to one is picked up at the next
// reconcile, as before, at most TTL later.
type Memo struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[types.NamespacedName]credentialsEntry
	// reads lets reconciles that miss the memo at the same time (a rollout
	// of many InferenceServices into a new namespace) share one read.
	reads singleflight.Group
}

type credentialsEntry struct {
	at      time.Time
	found   bool
	secrets []corev1.Secret
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo {
	return &Memo{now: time.Now, entries: map[types.NamespacedName]credentialsEntry{}}
}

// ServiceAccountSecrets returns the Secrets the ServiceAccount sa lists,
// remembered or read through r (uncached: the manager caches no
// ServiceAccounts or Secrets); none when it does not exist.
func (m *Memo) ServiceAccountSecrets(ctx context.Context, r client.Reader, sa types.NamespacedName) ([]corev1.Secret, error) {
	e, err := m.load(sa, func() (credentialsEntry, error) { return readServiceAccount(ctx, r, sa) })
	return e.secrets, err
}

// ServiceAccountExists reports whether the ServiceAccount exists, read and
// remembered (for TTL) as ServiceAccountSecrets reads it.
func (m *Memo) ServiceAccountExists(ctx context.Context, r client.Reader, sa types.NamespacedName) (bool, error) {
	e, err := m.load(sa, func() (credentialsEntry, error) { return readServiceAccount(ctx, r, sa) })
	return e.found, err
}

// readServiceAccount reads a ServiceAccount and the Secrets it lists;
// not found, with none, when it does not exist.
func readServiceAccount(ctx context.Context, r client.Reader, key types.NamespacedName) (credentialsEntry, error) {
	sa := &corev1.ServiceAccount{}
	if err := r.Get(ctx, key, sa); err != nil {
		return credentialsEntry{}, client.IgnoreNotFound(err)
	}
	var secrets []corev1.Secret
	for _, ref := range sa.Secrets {
		secret := &corev1.Secret{}
		err := r.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: ref.Name}, secret)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return credentialsEntry{}, fmt.Errorf("read Secret %s of ServiceAccount %s: %w", ref.Name, key.Name, err)
		}
		secrets = append(secrets, *secret)
	}
	return credentialsEntry{found: true, secrets: secrets}, nil
}

// load returns the Secrets of a ServiceAccount: remembered, or read by read
// and remembered. Concurrent loads of the same ServiceAccount call read once.
// They share its outcome, an error included (a read cut short with the first
// caller's context): each such reconcile is retried like any failed read.
func (m *Memo) load(sa types.NamespacedName, read func() (credentialsEntry, error)) (credentialsEntry, error) {
	if e, ok := m.get(sa); ok {
		return e, nil
	}
	v, err, _ := m.reads.Do(sa.String(), func() (any, error) {
		if e, ok := m.get(sa); ok {
			return e, nil
		}
		e, err := read()
		if err != nil {
			return nil, err
		}
		m.put(sa, e)
		return e, nil
	})
	if err != nil {
		return credentialsEntry{}, err
	}
	return v.(credentialsEntry), nil
}

// get returns what is remembered of a ServiceAccount, if still fresh.
func (m *Memo) get(sa types.NamespacedName) (credentialsEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[sa]
	if !ok || m.now().Sub(e.at) >= TTL {
		return credentialsEntry{}, false
	}
	return e, true
}

// put remembers what was read of a ServiceAccount, and forgets the entries
// that have gone stale, so the memo holds only the ServiceAccounts in use.
func (m *Memo) put(sa types.NamespacedName, e credentialsEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.entries {
		if now.Sub(e.at) >= TTL {
			delete(m.entries, k)
		}
	}
	e.at = now
	m.entries[sa] = e
}
