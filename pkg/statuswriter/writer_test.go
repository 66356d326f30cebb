package statuswriter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// recorder is a client that records the status patches it is sent.
type recorder struct {
	client.Client
	scheme  *runtime.Scheme
	patches []string
}

func (r *recorder) Scheme() *runtime.Scheme          { return r.scheme }
func (r *recorder) Status() client.SubResourceWriter { return statusOf{recorder: r} }

// statusOf is the recorder's status writer; only Patch is used.
type statusOf struct {
	client.SubResourceWriter
	recorder *recorder
}

func (s statusOf) Patch(_ context.Context, obj client.Object, patch client.Patch, _ ...client.SubResourcePatchOption) error {
	data, err := patch.Data(obj)
	s.recorder.patches = append(s.recorder.patches, string(data))
	obj.SetResourceVersion("next")
	return err
}

// TestWrite: a status equal to what was read is not sent; one that
// differs is patched once, keeping the transition time of a condition
// whose status did not change and stamping one that did; a reconcile that
// ran on the copy the last write was made over writes nothing when it
// computes that status again, and, when it computes another, sends it with
// the resourceVersion so that it cannot undo a newer write.
func TestWrite(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	rec := &recorder{scheme: scheme}
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	w := &Writer[v1alpha1.LocalModelCacheStatus]{Client: rec, Now: func() time.Time { return now },
		Status:     func(o client.Object) *v1alpha1.LocalModelCacheStatus { return &o.(*v1alpha1.LocalModelCache).Status },
		Conditions: func(st *v1alpha1.LocalModelCacheStatus) *[]metav1.Condition { return &st.Conditions }}
	earlier := metav1.NewTime(now.Add(-time.Hour))
	read := &v1alpha1.LocalModelCache{ObjectMeta: metav1.ObjectMeta{Name: "llama", ResourceVersion: "1"}}
	read.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Downloading", LastTransitionTime: earlier},
		{Type: "Other", Status: metav1.ConditionTrue, Reason: "Fine", LastTransitionTime: earlier}}
	status := func(ready metav1.ConditionStatus, reason string) v1alpha1.LocalModelCacheStatus {
		return v1alpha1.LocalModelCacheStatus{Conditions: []metav1.Condition{
			{Type: "Ready", Status: ready, Reason: reason}, {Type: "Other", Status: metav1.ConditionTrue, Reason: "Fine"}}}
	}
	ctx := context.Background()

	written, err := w.Write(ctx, read.DeepCopy(), read, status(metav1.ConditionFalse, "Downloading"))
	require.NoError(t, err)
	assert.False(t, written, "the same status, transition times apart, is not sent")
	assert.Empty(t, rec.patches)

	obj := read.DeepCopy()
	written, err = w.Write(ctx, obj, read, status(metav1.ConditionTrue, "Downloaded"))
	require.NoError(t, err)
	assert.True(t, written)
	require.Len(t, rec.patches, 1)
	assert.NotContains(t, rec.patches[0], `"resourceVersion"`, "a fresh read needs no lock")
	ready, other := obj.Status.Conditions[0], obj.Status.Conditions[1]
	assert.Equal(t, now, ready.LastTransitionTime.Time.UTC(), "a changed condition is stamped")
	assert.Equal(t, earlier, other.LastTransitionTime, "an unchanged one keeps its time")

	// Another reconcile on the same (old) copy.
	written, err = w.Write(ctx, read.DeepCopy(), read, status(metav1.ConditionTrue, "Downloaded"))
	require.NoError(t, err)
	assert.False(t, written, "already written over this copy")
	written, err = w.Write(ctx, read.DeepCopy(), read, status(metav1.ConditionFalse, "DownloadFailed"))
	require.NoError(t, err)
	assert.True(t, written)
	require.Len(t, rec.patches, 2)
	assert.Contains(t, rec.patches[1], `"resourceVersion":"1"`, "from an old copy: only if it is still that version")

	// A reconcile on the old copy that computes the status the copy shows
	// (the change that caused the last write was undone meanwhile): the
	// server holds the last write, so it is sent, locked, and not skipped.
	written, err = w.Write(ctx, read.DeepCopy(), read, status(metav1.ConditionFalse, "Downloading"))
	require.NoError(t, err)
	assert.True(t, written, "equal to a stale copy is not equal to the server's status")
	require.Len(t, rec.patches, 3)
	assert.Contains(t, rec.patches[2], `"resourceVersion":"1"`)
	rec.patches = rec.patches[:2]

	// The cache caught up: compared with what it shows, with no lock.
	newer := read.DeepCopy()
	newer.ResourceVersion = "2"
	_, err = w.Write(ctx, newer.DeepCopy(), newer, status(metav1.ConditionTrue, "Downloaded"))
	require.NoError(t, err)
	require.Len(t, rec.patches, 3)
	assert.NotContains(t, rec.patches[2], `"resourceVersion"`)

	locked := &Writer[v1alpha1.LocalModelCacheStatus]{Client: rec, AlwaysLock: true, Status: w.Status}
	_, err = locked.Write(ctx, newer.DeepCopy(), newer, status(metav1.ConditionTrue, "Downloaded"))
	require.NoError(t, err)
	assert.Contains(t, rec.patches[3], `"resourceVersion":"2"`, "an object with other status writers: always locked")
}
