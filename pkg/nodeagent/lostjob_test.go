package nodeagent

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// TestLostJob: a Job the cache has not shown past the deadline is looked
// for: still at the API server, the agent waits for its cache; gone, it is
// forgotten with an Event, so that the next attempt may start.
func TestLostJob(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := events.NewFakeRecorder(4)
	there := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "there"}}
	a := &Agent{Reader: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(there).Build(), Recorder: rec,
		Clock: func() time.Time { return now }}
	e := v1alpha1.LocalModelInfo{ModelName: "m"}
	lmn := &v1alpha1.LocalModelNode{}

	a.remember("m", there)
	lost, err := a.lostJob(context.Background(), lmn, e, a.created["m"])
	require.NoError(t, err)
	assert.False(t, lost, "still at the API server: the cache lags")
	_, pending := a.pending("m")
	assert.True(t, pending)

	now = now.Add(2 * UnseenJobDeadline)
	a.remember("m", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "gone"}})
	lost, err = a.lostJob(context.Background(), lmn, e, a.created["m"])
	require.NoError(t, err)
	assert.True(t, lost)
	_, pending = a.pending("m")
	assert.False(t, pending, "forgotten: the next attempt may start")
	assert.Contains(t, <-rec.Events, "JobLost")
}
