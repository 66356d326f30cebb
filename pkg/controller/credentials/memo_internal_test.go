package credentials

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestCredentialsMemo(t *testing.T) {
	now := time.Unix(1e9, 0)
	m := NewMemo()
	m.now = func() time.Time { return now }
	sa := types.NamespacedName{Namespace: "ns", Name: "default"}
	other := types.NamespacedName{Namespace: "ns", Name: "other"}

	_, ok := m.get(sa)
	assert.False(t, ok, "nothing remembered yet")
	m.put(sa, credentialsEntry{found: true, secrets: []corev1.Secret{{}}})
	got, ok := m.get(sa)
	assert.True(t, ok)
	assert.Len(t, got.secrets, 1)
	assert.True(t, got.found)

	now = now.Add(TTL - time.Second)
	_, ok = m.get(sa)
	assert.True(t, ok, "fresh until the TTL")
	now = now.Add(time.Second)
	_, ok = m.get(sa)
	assert.False(t, ok, "read again after the TTL")

	m.put(other, credentialsEntry{})
	assert.Len(t, m.entries, 1, "stale entries are dropped as new ones come")
}

// TestCredentialsMemoLoadsOnceForConcurrentMisses: 16 loads at once read
// once, however they interleave: those that arrive while the read is in
// flight share it, the later ones find its result remembered.
func TestCredentialsMemoLoadsOnceForConcurrentMisses(t *testing.T) {
	m := NewMemo()
	sa := types.NamespacedName{Namespace: "ns", Name: "default"}
	var reads atomic.Int32
	release := make(chan struct{})
	read := func() (credentialsEntry, error) {
		reads.Add(1)
		<-release
		return credentialsEntry{found: true, secrets: []corev1.Secret{{}}}, nil
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			got, err := m.load(sa, read)
			assert.NoError(t, err)
			assert.Len(t, got.secrets, 1)
		})
	}
	assert.Eventually(t, func() bool { return reads.Load() == 1 }, time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(1), reads.Load(), "one read for 16 reconciles that missed together")

	got, err := m.load(sa, func() (credentialsEntry, error) { t.Fatal("read while remembered"); return credentialsEntry{}, nil })
	assert.NoError(t, err)
	assert.Len(t, got.secrets, 1)

	other := types.NamespacedName{Namespace: "ns", Name: "other"}
	_, err = m.load(other, func() (credentialsEntry, error) { return credentialsEntry{}, errors.New("boom") })
	assert.EqualError(t, err, "boom")
	_, ok := m.get(other)
	assert.False(t, ok, "a failed read is not remembered")
}
