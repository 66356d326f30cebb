package localmodel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// TestModelState: a model's state on a node from its Jobs and its agent's
// report. A report counts only once it names the latest Job; an empty
// folder starts the next attempt; a copy too large for its declared size
// is not downloaded again until the cache declares enough.
func TestModelState(t *testing.T) {
	size := resource.MustParse("1Ki")
	entry := v1alpha1.LocalModelInfo{SourceModelUri: "hf://org/m", ModelName: "m", NodeGroup: "g", ModelSize: &size}
	job := func(name string, done, ok bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", CreationTimestamp: metav1.NewTime(time.Unix(int64(len(name)), 0))}}
		switch {
		case done && ok:
			j.Status.Succeeded = 1
		case done:
			j.Status.Failed = 1
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
		}
		return j
	}
	cases := []struct {
		name       string
		jobs       []batchv1.Job
		prevJob    string
		copy       *v1alpha1.LocalModelCopy
		status     v1alpha1.ModelStatus
		reason     string
		launched   bool
		wantJob    string
		jobRunning bool
	}{
		{name: "no report yet", status: v1alpha1.ModelDownloadPending, reason: ReasonWaitingForAgent},
		{name: "an empty folder", copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent},
			status: v1alpha1.ModelDownloadPending, launched: true, jobRunning: true},
		{name: "a copy found before any download", copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyPresent, Bytes: 10, Digest: "d"},
			status: v1alpha1.ModelDownloaded},
		{name: "a Job running", jobs: []batchv1.Job{job("j1", false, false)}, copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent},
			status: v1alpha1.ModelDownloadPending, wantJob: "j1", jobRunning: true},
		{name: "a Job done, the report older", jobs: []batchv1.Job{job("j1", true, true)}, copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent},
			status: v1alpha1.ModelDownloading, reason: ReasonMeasuring, wantJob: "j1"},
		{name: "measuring", jobs: []batchv1.Job{job("j1", true, true)}, copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyMeasuring, Job: "j1"},
			status: v1alpha1.ModelDownloading, reason: ReasonMeasuring, wantJob: "j1"},
		{name: "measured", jobs: []batchv1.Job{job("j1", true, true)}, copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyPresent, Job: "j1", Bytes: 10, Digest: "d"},
			status: v1alpha1.ModelDownloaded, wantJob: "j1"},
		{name: "a Job that left nothing", jobs: []batchv1.Job{job("j1", true, true)}, copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent, Job: "j1"},
			status: v1alpha1.ModelDownloadPending, reason: ReasonModelMissing, launched: true, jobRunning: true},
		{name: "attempts spent", jobs: []batchv1.Job{job("j1", true, false), job("j22", true, false), job("j333", true, false)},
			copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyAbsent, Job: "j333"}, status: v1alpha1.ModelDownloadError, reason: "BackoffLimitExceeded", wantJob: "j333"},
		{name: "too large", jobs: []batchv1.Job{job("j1", true, true)},
			copy:   &v1alpha1.LocalModelCopy{State: v1alpha1.CopyFailed, Job: "j1", Bytes: 4096, Reason: modelcache.ReasonModelTooLarge},
			status: v1alpha1.ModelDownloadError, reason: modelcache.ReasonModelTooLarge, wantJob: "j1"},
		{name: "changed", copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyFailed, Job: "old", Digest: "d", Reason: modelcache.ReasonCopyChanged},
			prevJob: "old", status: v1alpha1.ModelDownloadError, reason: modelcache.ReasonCopyChanged, wantJob: "old"},
		{name: "Jobs gone by their TTL, the copy kept", prevJob: "j1", copy: &v1alpha1.LocalModelCopy{State: v1alpha1.CopyPresent, Job: "j1", Digest: "d"},
			status: v1alpha1.ModelDownloaded, wantJob: "j1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, clientgoscheme.AddToScheme(scheme))
			require.NoError(t, v1alpha1.AddToScheme(scheme))
			c := fake.NewClientBuilder().WithScheme(scheme).Build()
			d := &Downloads{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), credentials: credentials.NewMemo()}
			lmn := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1alpha1.LocalModelNodeStatus{
				Models: map[string]v1alpha1.LocalModelDetail{"m": {Job: tc.prevJob}}}}
			if tc.copy != nil {
				lmn.Status.Copies = map[string]v1alpha1.LocalModelCopy{"m": *tc.copy}
			}
			st, err := d.model(context.Background(), lmn, entry, tc.jobs, config.Default())
			require.NoError(t, err)
			assert.Equal(t, tc.status, st.status)
			assert.Equal(t, tc.reason, st.detail.Reason)
			assert.Equal(t, tc.jobRunning, st.detail.JobRunning)
			created := &batchv1.JobList{}
			require.NoError(t, c.List(context.Background(), created))
			if tc.launched {
				require.Len(t, created.Items, 1, "one Job started")
				assert.Equal(t, created.Items[0].Name, st.detail.Job)
				return
			}
			assert.Empty(t, created.Items, "no Job started")
			assert.Equal(t, tc.wantJob, st.detail.Job)
		})
	}
}

// TestJobsOfThisList: a model's attempts are the Jobs of its own entry
// made for this very node list; a Job of an earlier list of the same name
// (deleted and made again, its Jobs not collected yet), of another model
// or of another group, or being deleted, is not one.
func TestJobsOfThisList(t *testing.T) {
	lmn := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "now"}}
	earlier := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "before"}}
	e := v1alpha1.LocalModelInfo{ModelName: "m", NodeGroup: "g", Namespace: "team"}
	job := func(name string, owner *v1alpha1.LocalModelNode, model, group string, deleting bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			modelcache.ModelLabel: model, modelcache.ModelNamespaceLabel: "team", modelcache.GroupNameLabel: group}}}
		j.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, v1alpha1.GroupVersion.WithKind("LocalModelNode"))}
		if deleting {
			j.DeletionTimestamp = ptr.To(metav1.Now())
		}
		return j
	}
	all := []batchv1.Job{job("mine", lmn, "m", "g", false), job("old-list", earlier, "m", "g", false), job("other-model", lmn, "x", "g", false),
		job("other-group", lmn, "m", "h", false), job("going", lmn, "m", "g", true)}
	var names []string
	for _, j := range jobsOf(all, e, lmn) {
		names = append(names, j.Name)
	}
	assert.Equal(t, []string{"mine"}, names)
}
