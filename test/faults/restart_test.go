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

// TestManagerKilledMidRollout kills the manager (SIGKILL) when half of the
// InferenceServices are Ready, starts it again, and checks that all go
// Ready with every child exactly once, labelled and owned. Then it restarts
// the manager once more on the unchanged cluster: zero writes.
func TestManagerKilledMidRollout(t *testing.T) {
	n := size(200, 5)
	sb := startCluster(t, nil)
	c := sb.Client
	const ns = "killed"
	require.NoError(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))

	m := startManager(t, sb)
	start := time.Now()
	createISVCs(t, c, ns, "m", n)
	waitFor(t, "half of them Ready", 5*time.Minute, func() bool { r, _ := ready(t, c, ns); return r >= n/2 })
	before := m.writes()
	m.Kill()
	killedAt := time.Now()
	readyAtKill, _ := ready(t, c, ns)
	t.Logf("killed the manager at %d/%d Ready, %s after the first create, after %.0f writes", readyAtKill, n, killedAt.Sub(start).Round(time.Millisecond), before)

	m = startManager(t, sb)
	converge := waitAllReady(t, c, ns, n, 3*time.Minute)
	recoveryWrites := m.writes()
	t.Logf("after the restart: all %d Ready in %s, with %.0f writes (%.2f per InferenceService)", n, converge.Round(time.Millisecond),
		recoveryWrites, recoveryWrites/float64(n))
	checkChildren(t, c, ns)

	// An unchanged cluster: a restarted manager reconciles everything and
	// writes nothing, its skip state read back from the children.
	m.Terminate(30 * time.Second)
	m = startManager(t, sb)
	reconciled := waitFor(t, "the restarted manager to look at every child", 5*time.Minute, func() bool {
		return m.metric("serval_apply_total", "result", "skip") >= float64(4*n)
	})
	waitFor(t, "the work queue to drain", time.Minute, func() bool { return m.metric("workqueue_depth", "name", "inferenceservice") == 0 })
	writes := m.writes()
	t.Logf("restart of an unchanged cluster: %d InferenceServices looked at in %s with %.0f writes", n, reconciled.Round(time.Millisecond), writes)
	assert.Zero(t, writes, "an unchanged cluster costs no writes after a restart")
}
