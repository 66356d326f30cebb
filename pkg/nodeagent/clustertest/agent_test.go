// Package clustertest runs the node agent against a real API server and a
// local HTTP server holding a small model, with the test playing the
// kubelet: it runs each download Job's download, as the storage initializer
// would, into the folder the Job's claim and subPath point at.
package clustertest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/nodeagent"
)

const (
	node         = "agent-node"
	group        = "nvme"
	jobNamespace = "serval-localmodel-jobs"
)

var (
	env *testenv.Environment
	k8s client.Client
)

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: scheme},
		func(e *testenv.Environment) { env, k8s = e, e.Client })
}

// modelFiles are the small model the HTTP server holds, as a tar.gz.
var modelFiles = map[string]string{"config.json": `{"architectures":["Tiny"]}`, "weights/model.safetensors": strings.Repeat("w", 4096)}

func tarball(t *testing.T) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range modelFiles {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}))
		_, err := tw.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// download does what the storage initializer does with an http(s) URI of
// a .tar.gz: fetch it and unpack it into dir.
func download(uri, dir string) error {
	resp, err := http.Get(uri)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", uri, resp.Status)
	}
	gz, err := gzip.NewReader(resp.Body)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
}

// playKubelet runs every new download Job once: the download into the
// group's disk at the Job's subPath, then the Job's (and its pod's) end.
func playKubelet(ctx context.Context, t *testing.T, root string) {
	done := map[types.UID]bool{}
	for ctx.Err() == nil {
		jobs := &batchv1.JobList{}
		if err := k8s.List(ctx, jobs, client.InNamespace(jobNamespace)); err == nil {
			for i := range jobs.Items {
				j := &jobs.Items[i]
				if done[j.UID] {
					continue
				}
				done[j.UID] = true
				c := j.Spec.Template.Spec.Containers[0]
				err := download(c.Args[0], filepath.Join(root, c.VolumeMounts[0].SubPath))
				finishJob(ctx, t, j, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finishJob ends a Job as the Job controller does, with its pod's
// termination message on failure.
func finishJob(ctx context.Context, t *testing.T, j *batchv1.Job, failure error) {
	now := metav1.Now()
	j.Status.StartTime = &now
	if failure == nil {
		j.Status.Succeeded, j.Status.CompletionTime = 1, &now
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	} else {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-pod", Namespace: j.Namespace, Labels: map[string]string{"job-name": j.Name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "download", Image: "x"}}}}
		if err := k8s.Create(ctx, pod); err == nil {
			pod.Status.Phase = corev1.PodFailed
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "download", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: failure.Error()}}}}
			_ = k8s.Status().Update(ctx, pod)
		}
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now}}
	}
	if err := k8s.Status().Update(ctx, j); err != nil {
		t.Errorf("finish Job %s: %v", j.Name, err)
	}
}

func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func lmn(t *testing.T) *v1alpha1.LocalModelNode {
	t.Helper()
	n := &v1alpha1.LocalModelNode{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Name: node}, n))
	return n
}

// TestAgent: a model downloaded into its folder, with its size and digest
// reported; a failing URL tried a bounded number of times, its reason in
// the status, and no more Jobs after; a model taken off the list deleted.
func TestAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := tarball(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tiny.tar.gz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: jobNamespace}}))
	root := t.TempDir()
	go playKubelet(ctx, t, root)
	agentErr := make(chan error, 1)
	go func() {
		agentErr <- nodeagent.Run(ctx, env.Config, nodeagent.Options{Node: node, Group: group, Namespace: "serval-system", ModelsRoot: root, HealthProbeAddr: "0"})
	}()

	good, bad := srv.URL+"/tiny.tar.gz", srv.URL+"/missing.tar.gz"
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
		{SourceModelUri: good, ModelName: "tiny", NodeGroup: group},
		{SourceModelUri: bad, ModelName: "broken", NodeGroup: group},
		{SourceModelUri: srv.URL + "/other", ModelName: "elsewhere", NodeGroup: "another-group"},
	}}}))

	// Downloaded, measured: the files landed in the URI's folder intact.
	eventually(t, "downloaded", func() bool { return lmn(t).Status.ModelStatus["tiny"] == v1alpha1.ModelDownloaded })
	folder := filepath.Join(root, "models", v1alpha1.StorageKey(good))
	data, err := os.ReadFile(filepath.Join(folder, "config.json"))
	require.NoError(t, err)
	assert.Equal(t, modelFiles["config.json"], string(data))
	ref := t.TempDir()
	for name, b := range modelFiles {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(ref, "models", "ref", name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ref, "models", "ref", name), []byte(b), 0o644))
	}
	size, digest, err := nodeagent.Disk{Root: ref}.Measure("ref")
	require.NoError(t, err)
	d := lmn(t).Status.Models["tiny"]
	assert.Equal(t, int64(len(modelFiles["config.json"])+4096), d.Bytes)
	assert.Equal(t, size, d.Bytes)
	assert.Equal(t, digest, d.Digest, "the digest of the files the server holds")
	assert.Equal(t, int32(1), d.Attempts)

	// The failing URL: three attempts, the reason, then no more.
	eventually(t, "the failure reported", func() bool { return lmn(t).Status.ModelStatus["broken"] == v1alpha1.ModelDownloadError })
	f := lmn(t).Status.Models["broken"]
	assert.Equal(t, int32(3), f.Attempts)
	assert.Equal(t, "BackoffLimitExceeded", f.Reason)
	assert.Contains(t, f.Message, "404 Not Found")
	time.Sleep(2 * time.Second)
	jobs := &batchv1.JobList{}
	require.NoError(t, k8s.List(ctx, jobs, client.InNamespace(jobNamespace), client.MatchingLabels{nodeagent.ModelLabel: "broken"}))
	assert.Len(t, jobs.Items, 3, "no download loop")
	_, other := lmn(t).Status.ModelStatus["elsewhere"]
	assert.False(t, other, "another group's model is its own agent's")
	disk := lmn(t).Status.Disks[group]
	assert.NotZero(t, disk.Capacity.Value(), "the disk's space reported")

	// Events say what the agent did, on the node's LocalModelNode.
	eventually(t, "the Events", func() bool {
		evs := &eventsv1.EventList{}
		if err := k8s.List(ctx, evs); err != nil {
			return false
		}
		reasons := map[string]int{}
		for _, ev := range evs.Items {
			if ev.Regarding.Kind == "LocalModelNode" && ev.Regarding.Name == node {
				reasons[ev.Reason]++
				if ev.Reason == "DownloadFailed" && !strings.Contains(ev.Note, "broken: BackoffLimitExceeded after 3 attempts") {
					return false
				}
			}
		}
		return reasons["Downloading"] >= 4 && reasons["DownloadFailed"] == 1
	})

	// Taken off the list: its folder and its Jobs go, and its report.
	n := lmn(t)
	n.Spec.LocalModels = n.Spec.LocalModels[1:]
	require.NoError(t, k8s.Update(ctx, n))
	eventually(t, "the folder deleted", func() bool {
		_, err := os.Stat(folder)
		_, reported := lmn(t).Status.ModelStatus["tiny"]
		return os.IsNotExist(err) && !reported
	})
	cancel()
	require.NoError(t, <-agentErr)
}
