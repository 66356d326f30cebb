package inferenceservice

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestCredentialsMemo(t *testing.T) {
	now := time.Unix(1e9, 0)
	m := newCredentialsMemo()
	m.now = func() time.Time { return now }
	sa := types.NamespacedName{Namespace: "ns", Name: "default"}
	other := types.NamespacedName{Namespace: "ns", Name: "other"}

	_, ok := m.get(sa)
	assert.False(t, ok, "nothing remembered yet")
	m.put(sa, []corev1.Secret{{}})
	got, ok := m.get(sa)
	assert.True(t, ok)
	assert.Len(t, got, 1)

	now = now.Add(CredentialsTTL - time.Second)
	_, ok = m.get(sa)
	assert.True(t, ok, "fresh until the TTL")
	now = now.Add(time.Second)
	_, ok = m.get(sa)
	assert.False(t, ok, "read again after the TTL")

	m.put(other, nil)
	assert.Len(t, m.entries, 1, "stale entries are dropped as new ones come")
}
