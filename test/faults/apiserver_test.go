package faults

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAPIServerRestartMidRollout stops the API server for a while during a
// rollout and starts it again: the running manager reconnects on its own
// (no restart) and every InferenceService goes Ready.
func TestAPIServerRestartMidRollout(t *testing.T) {
	n := size(100, 5)
	sb := startCluster(t, nil)
	c := sb.Client
	const ns = "apiserver"
	require.NoError(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	m := startManager(t, sb)
	createISVCs(t, c, ns, "a", n)
	waitFor(t, "a third of them Ready", 5*time.Minute, func() bool { r, _ := ready(t, c, ns); return r >= n/3 })
	readyAtStop, _ := ready(t, c, ns)
	down := 10 * time.Second
	require.NoError(t, sb.RestartAPIServer(context.Background(), down))
	back := time.Now()
	t.Logf("API server down for %s at %d/%d Ready", down, readyAtStop, n)
	converge := waitAllReady(t, c, ns, n, 5*time.Minute)
	assert.False(t, m.Exited(), "the manager kept running through the outage")
	t.Logf("all %d Ready %s after the API server came back; the manager sent %.0f writes in all", n, converge.Round(time.Millisecond), m.writes())
	assert.Less(t, time.Since(back), 5*time.Minute)
	checkChildren(t, c, ns)
}
