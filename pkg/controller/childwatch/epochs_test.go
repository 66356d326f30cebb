package childwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// removals counts RemoveInformer calls; the rest of cache.Cache is not
// used by epochs.
type removals struct {
	cache.Cache
	n int
}

func (r *removals) RemoveInformer(context.Context, client.Object) error { r.n++; return nil }

// TestEpochs: a kind's informer is removed once each time its CRD goes,
// however many controllers sharing the cache see it go, and a controller
// whose source is of an earlier epoch knows to start a new one when the
// CRD is back.
func TestEpochs(t *testing.T) {
	c := &removals{}
	e := epochsOf(c)
	require.Same(t, e, epochsOf(c), "one per cache")
	ctx := context.Background()
	const key = "keda.sh/v1alpha1, Kind=ScaledObject"
	started := e.back(key)

	for range 2 { // two controllers see the CRD go
		epoch, err := e.gone(ctx, c, key, &corev1.Pod{})
		require.NoError(t, err)
		assert.Equal(t, started+1, epoch)
	}
	assert.Equal(t, 1, c.n, "removed once")
	assert.NotEqual(t, started, e.back(key), "a source of the earlier epoch is started again")

	_, err := e.gone(ctx, c, key, &corev1.Pod{}) // gone a second time
	require.NoError(t, err)
	assert.Equal(t, 2, c.n)
	assert.Equal(t, started+2, e.back(key))
}
