package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestLeaderFailover runs two managers with leader election. Stopped with
// SIGTERM, the leader gives its lease up and the other takes over at once;
// killed with SIGKILL, the other takes over once the lease expires, and a
// new InferenceService is reconciled within 30 s of the kill.
func TestLeaderFailover(t *testing.T) {
	sb := startCluster(t, nil)
	c := sb.Client
	const ns = "leader"
	require.NoError(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	a := startManager(t, sb, "--leader-elect")
	b := startManager(t, sb, "--leader-elect")
	leaderOf := func(ms ...*manager) *manager {
		for _, m := range ms {
			if !m.Exited() && m.metric("leader_election_master_status") == 1 {
				return m
			}
		}
		return nil
	}
	waitFor(t, "a leader", time.Minute, func() bool { return leaderOf(a, b) != nil })
	leader, other := a, b
	if leaderOf(a, b) == b {
		leader, other = b, a
	}

	stopped := time.Now()
	leader.Terminate(30 * time.Second)
	handover := waitFor(t, "the other to lead after SIGTERM", time.Minute, func() bool { return leaderOf(other) != nil })
	t.Logf("SIGTERM: the other manager led %s after the leader was told to stop (lease released)", time.Since(stopped).Round(time.Millisecond))
	require.Less(t, handover, 10*time.Second, "a released lease is taken at once, not after it expires")

	third := startManager(t, sb, "--leader-elect")
	waitFor(t, "the new follower trying for the lease", time.Minute, func() bool {
		return strings.Contains(strings.ToLower(third.Log()), "attempting to acquire leader lease")
	})
	killed := time.Now()
	other.Kill()
	require.NoError(t, c.Create(context.Background(), isvc(ns, "after-failover")))
	reconciled := waitFor(t, "the new InferenceService's Deployment", time.Minute, func() bool {
		return c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "after-failover-predictor"}, &appsv1.Deployment{}) == nil
	})
	t.Logf("SIGKILL: a new InferenceService was reconciled %s after the leader was killed (lease 15 s, renew 10 s, retry 2 s)",
		time.Since(killed).Round(time.Millisecond))
	require.Less(t, reconciled, 30*time.Second)
	require.NotNil(t, leaderOf(third))
}
