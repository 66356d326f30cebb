package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestWatchExpiry pauses the manager, restarts the API server, which ends
// every watch, and changes the cluster while etcd compacts away the history
// the manager's watches would resume from (the API server serves watches
// from etcd, with no watch cache, and compacts every 2 s). Resumed, the
// manager's watches resume from a compacted version and get "too old
// resource version", its informers list again, and nothing is missed:
// created InferenceServices are deployed, updated ones rolled, deleted ones
// gone with their children. The watches end before the changes: the socket
// of a paused process still takes in what the API server sends, and a
// watch still open during the changes could resume past them, nothing
// expired.
func TestWatchExpiry(t *testing.T) {
	n := size(20, 5)
	sb := startCluster(t, map[string]string{"watch-cache": "false", "etcd-compaction-interval": "2s"})
	c := sb.Client
	ctx := context.Background()
	const ns = "expiry"
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	// Verbose enough to log what the informers do when a watch expires.
	m := startManager(t, sb, "--zap-log-level=6")
	createISVCs(t, c, ns, "old", n)
	waitAllReady(t, c, ns, n, 5*time.Minute)

	require.NoError(t, m.Pause())
	require.NoError(t, sb.RestartAPIServer(ctx, time.Second))
	createISVCs(t, c, ns, "new", n)
	for i := range 5 {
		require.NoError(t, c.Delete(ctx, isvc(ns, fmt.Sprintf("old-%d", i))))
	}
	for i := 5; i < 10; i++ {
		key := types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("old-%d", i)}
		got := &v1beta1.InferenceService{}
		require.NoError(t, c.Get(ctx, key, got))
		got.Spec.Predictor.Model.Args = []string{"--workers=2"}
		require.NoError(t, c.Update(ctx, got))
	}
	// With the manager frozen, wait until etcd has compacted past every
	// change: a list at the revision after them answers "too old".
	after := &v1beta1.InferenceServiceList{}
	require.NoError(t, c.List(ctx, after, client.InNamespace(ns)))
	waitFor(t, "a compaction past the changes", time.Minute, func() bool {
		err := c.List(ctx, &v1beta1.InferenceServiceList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: after.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
	})
	logBeforeResume := len(m.Log())
	require.NoError(t, m.Resume())
	resumed := time.Now()

	waitAllReady(t, c, ns, 2*n-5, 5*time.Minute)
	for i := 5; i < 10; i++ {
		dep := &appsv1.Deployment{}
		require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("old-%d-predictor", i)}, dep))
		assert.Contains(t, dep.Spec.Template.Spec.Containers[0].Args, "--workers=2", "the update made while paused is rolled out")
	}
	waitFor(t, "the deleted ones' children gone", time.Minute, func() bool {
		for i := range 5 {
			err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("old-%d-predictor", i)}, &appsv1.Deployment{})
			if !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	})
	checkChildren(t, c, ns)
	// Evidence that the fault was injected: informers listed again after the
	// resume (a watch resumed without expiring would have needed no list).
	afterResume := m.Log()[logBeforeResume:]
	relisted := strings.Count(afterResume, `"msg":"Listing and watching"`)
	expired := strings.Count(afterResume, "provided watch is too old")
	t.Logf("converged %s after the resume; %d informers listed again, %d of them after a watch expired (too old resource version)",
		time.Since(resumed).Round(time.Millisecond), relisted, expired)
	assert.Positive(t, relisted, "no informer listed again: the fault was not injected")
}
