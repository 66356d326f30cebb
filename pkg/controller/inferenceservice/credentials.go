package inferenceservice

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// CredentialsTTL is how long the Secrets of a ServiceAccount are reused
// before they are read again.
const CredentialsTTL = 30 * time.Second

// credentialsMemo remembers, for a short while, the Secrets attached to a
// ServiceAccount. Every reconcile of an InferenceService that downloads a
// model needs them; reading them each time cost two requests per
// InferenceService as it rolls out (more for a namespace of many), and
// caching every ServiceAccount and Secret of the cluster would cost memory
// and cluster-wide rights for objects Serval rarely needs. Nothing watches
// ServiceAccounts, so a credential attached to one is picked up at the next
// reconcile, as before, at most CredentialsTTL later.
type credentialsMemo struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[types.NamespacedName]credentialsEntry
	// reads lets reconciles that miss the memo at the same time (a rollout
	// of many InferenceServices into a new namespace) share one read.
	reads singleflight.Group
}

type credentialsEntry struct {
	at      time.Time
	secrets []corev1.Secret
}

func newCredentialsMemo() *credentialsMemo {
	return &credentialsMemo{now: time.Now, entries: map[types.NamespacedName]credentialsEntry{}}
}

// load returns the Secrets of a ServiceAccount: remembered, or read by read
// and remembered. Concurrent loads of the same ServiceAccount call read once.
// They share its outcome, an error included (a read cut short with the first
// caller's context): each such reconcile is retried like any failed read.
func (m *credentialsMemo) load(sa types.NamespacedName, read func() ([]corev1.Secret, error)) ([]corev1.Secret, error) {
	if secrets, ok := m.get(sa); ok {
		return secrets, nil
	}
	v, err, _ := m.reads.Do(sa.String(), func() (any, error) {
		if secrets, ok := m.get(sa); ok {
			return secrets, nil
		}
		secrets, err := read()
		if err != nil {
			return nil, err
		}
		m.put(sa, secrets)
		return secrets, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]corev1.Secret), nil
}

// get returns the Secrets remembered for a ServiceAccount, if still fresh.
func (m *credentialsMemo) get(sa types.NamespacedName) ([]corev1.Secret, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[sa]
	if !ok || m.now().Sub(e.at) >= CredentialsTTL {
		return nil, false
	}
	return e.secrets, true
}

// put remembers the Secrets of a ServiceAccount, and forgets the entries
// that have gone stale, so the memo holds only the ServiceAccounts in use.
func (m *credentialsMemo) put(sa types.NamespacedName, secrets []corev1.Secret) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, e := range m.entries {
		if now.Sub(e.at) >= CredentialsTTL {
			delete(m.entries, k)
		}
	}
	m.entries[sa] = credentialsEntry{at: now, secrets: secrets}
}
