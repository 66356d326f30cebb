// Package clustertest runs the node agent, as its own ServiceAccount with
// the rights the chart grants it, and the manager's downloads controller
// against a real API server and a local HTTP server holding a small model,
// with the test playing the kubelet: it runs each download Job's download,
// as the storage initializer would, into the model's folder.
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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/modelcache"
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

// playKubelet runs every new download Job of the node once, in any
// namespace: the download into the group's disk at the Job's subPath, then
// the Job's (and its pod's) end.
func playKubelet(ctx context.Context, t *testing.T, nodeName, root string) {
	done := map[types.UID]bool{}
	for ctx.Err() == nil {
		jobs := &batchv1.JobList{}
		if err := k8s.List(ctx, jobs, client.MatchingLabels{modelcache.NodeLabel: nodeName}); err == nil {
			for i := range jobs.Items {
				j := &jobs.Items[i]
				if done[j.UID] {
					continue
				}
				done[j.UID] = true
				c := j.Spec.Template.Spec.Containers[0]
				err := download(c.Args[0], filepath.Join(root, modelcache.ModelPath(j.Labels[modelcache.ModelNamespaceLabel], c.Args[0])))
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

// eventually waits for a state: as long as it takes on a loaded machine,
// up to two minutes, and no longer than it takes.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !f() {
		if time.Now().After(deadline) {
			// What the nodes say, to tell a stuck state from a slow one.
			lmns := &v1alpha1.LocalModelNodeList{}
			_ = k8s.List(context.Background(), lmns)
			for _, n := range lmns.Items {
				t.Logf("LocalModelNode %s: list %d, status %+v", n.Name, len(n.Spec.LocalModels), n.Status)
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func lmn(t *testing.T) *v1alpha1.LocalModelNode { return lmnOf(t, node) }

func lmnOf(t *testing.T, name string) *v1alpha1.LocalModelNode {
	t.Helper()
	n := &v1alpha1.LocalModelNode{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Name: name}, n))
	return n
}

// updateList changes a node's list, again on a conflict with the agent's
// status writes.
func updateList(t *testing.T, name string, change func(*v1alpha1.LocalModelNode)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := lmnOf(t, name)
		change(n)
		return k8s.Update(context.Background(), n)
	}))
}

// setUp makes what every agent test needs, once per process and again
// after it (so -count=N works): the Jobs' namespace, serval-config with a
// short resync and deletion grace period, the agent's rights as the chart
// grants them, and the manager's downloads controller.
func setUp(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{jobNamespace, "serval-system", "team"} {
		require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: "serval-system"},
		Data: map[string]string{"localModel.reconcilationFrequencyInSecs": "1", "localModel.deleteGracePeriod": grace.String(), "localModel.verifyPeriod": "1s"}}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, cm)))
	grantAgentRights(t)
	startDownloads(t)
}

// grace is the tests' deletion grace period.
const grace = 3 * time.Second

// startAgent runs an agent for node name on root until ctx ends, and
// cleans up the node's LocalModelNode after the test.
func startAgent(ctx context.Context, t *testing.T, name, root string) <-chan error {
	t.Helper()
	errs := make(chan error, 1)
	go func() {
		errs <- nodeagent.Run(ctx, asAgent(name), nodeagent.Options{Node: name, Group: group, Namespace: "serval-system", ModelsRoot: root,
			HealthProbeAddr: "0", SkipNameValidation: true})
	}()
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}})
		// In the background: no garbage collector runs here to take the
		// orphan finalizer off.
		for _, ns := range []string{jobNamespace, "team"} {
			_ = k8s.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(ns), client.MatchingLabels{modelcache.NodeLabel: name},
				client.PropagationPolicy(metav1.DeletePropagationBackground))
		}
	})
	return errs
}

// runNode runs an agent for node name on a disk of its own, with the test
// playing the node's kubelet and a server of the small model: it returns
// the test's context, the disk, the model's URI, and stop, which ends the
// agent and fails the test if it stopped with an error.
func runNode(t *testing.T, name string) (ctx context.Context, root, uri string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	setUp(t)
	srv := modelServer(t)
	root = t.TempDir()
	go playKubelet(ctx, t, name, root)
	agentErr := startAgent(ctx, t, name, root)
	return ctx, root, srv.URL + "/tiny.tar.gz", func() {
		cancel()
		require.NoError(t, <-agentErr)
	}
}

// modelServer serves the small model at /tiny.tar.gz.
func modelServer(t *testing.T) *httptest.Server {
	body := tarball(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tiny.tar.gz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgent: a model downloaded into its folder, with its size and digest
// reported; a failing URL tried a bounded number of times, its reason in
// the status, and no more Jobs after; a model taken off the list deleted.
func TestAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setUp(t)
	srv := modelServer(t)
	root := t.TempDir()
	go playKubelet(ctx, t, node, root)
	agentErr := startAgent(ctx, t, node, root)

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
	require.NoError(t, k8s.List(ctx, jobs, client.InNamespace(jobNamespace), client.MatchingLabels{modelcache.ModelLabel: "broken"}))
	assert.Len(t, jobs.Items, 3, "no download loop")
	assert.Equal(t, v1alpha1.ModelDownloadPending, lmn(t).Status.ModelStatus["elsewhere"], "another group's model waits for its own agent")
	assert.Equal(t, "WaitingForNodeAgent", lmn(t).Status.Models["elsewhere"].Reason)
	_, other := lmn(t).Status.Copies["elsewhere"]
	assert.False(t, other, "another group's folder is its own agent's to report")
	disk := lmn(t).Status.Disks[group]
	assert.NotZero(t, disk.Capacity.Value(), "the disk's space reported")

	// Events say what the manager and the agent did, on the node's
	// LocalModelNode.
	var seen map[string]int
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the Events by reason: %v", seen)
			evs := &eventsv1.EventList{}
			_ = k8s.List(context.Background(), evs)
			for _, ev := range evs.Items {
				if ev.Regarding.Name == node && ev.Reason == "DownloadFailed" {
					t.Logf("DownloadFailed Event %s: regarding version %s, uid %s, at %s, by %s/%s: %s", ev.Name, ev.Regarding.ResourceVersion, ev.Regarding.UID, ev.EventTime.Format("15:04:05.000"), ev.ReportingController, ev.ReportingInstance, ev.Note)
				}
			}
		}
	})
	eventually(t, "the Events", func() bool {
		evs := &eventsv1.EventList{}
		if err := k8s.List(ctx, evs); err != nil {
			return false
		}
		reasons := map[string]int{}
		for _, ev := range evs.Items {
			if ev.Regarding.Kind == "LocalModelNode" && ev.Regarding.Name == node && ev.Regarding.UID == lmn(t).UID {
				reasons[ev.Reason]++
				if ev.Reason == "DownloadFailed" && !strings.Contains(ev.Note, "broken: BackoffLimitExceeded after 3 attempts") {
					return false
				}
			}
		}
		seen = reasons
		return reasons["Downloading"] >= 4 && reasons["DownloadFailed"] == 1
	})

	// Taken off the list: its report goes at once, its folder after the
	// grace period, with Events that say so and the folder's size.
	updateList(t, node, func(n *v1alpha1.LocalModelNode) { n.Spec.LocalModels = n.Spec.LocalModels[1:] })
	eventually(t, "the report gone", func() bool { _, reported := lmn(t).Status.ModelStatus["tiny"]; return !reported })
	dropped := time.Now()
	eventually(t, "the folder deleted", func() bool { _, err := os.Stat(folder); return os.IsNotExist(err) })
	assert.GreaterOrEqual(t, time.Since(dropped), grace-time.Second, "kept for the grace period")
	eventually(t, "the deletion's Events", func() bool {
		return hasEvent(ctx, node, "DeletionScheduled", "models/"+v1alpha1.StorageKey(good)) &&
			hasEvent(ctx, node, "Deleted", fmt.Sprintf("models/%s of node group %s (%d bytes)", v1alpha1.StorageKey(good), group, d.Bytes))
	})
	cancel()
	require.NoError(t, <-agentErr)
}

// hasEvent reports whether an Event of reason on the node's LocalModelNode
// says note.
func hasEvent(ctx context.Context, name, reason, note string) bool {
	evs := &eventsv1.EventList{}
	if err := k8s.List(ctx, evs); err != nil {
		return false
	}
	for _, ev := range evs.Items {
		if ev.Regarding.Kind == "LocalModelNode" && ev.Regarding.Name == name && ev.Reason == reason && strings.Contains(ev.Note, note) {
			return true
		}
	}
	return false
}

// TestNothingDeletedWithoutTheList: the node's LocalModelNode deleted (by
// hand, a restore) while a model is on the disk deletes neither the folder
// nor anything else, for longer than the grace period; the list back,
// the copy is found where it was, with no new download.
func TestNothingDeletedWithoutTheList(t *testing.T) {
	const name = "keeps-node"
	ctx, root, uri, stop := runNode(t, name)
	list := func() *v1alpha1.LocalModelNode {
		return &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
			{SourceModelUri: uri, ModelName: "kept", NodeGroup: group}}}}
	}
	require.NoError(t, k8s.Create(ctx, list()))
	eventually(t, "downloaded", func() bool { return lmnOf(t, name).Status.ModelStatus["kept"] == v1alpha1.ModelDownloaded })
	folder := filepath.Join(root, "models", v1alpha1.StorageKey(uri))

	require.NoError(t, k8s.Delete(ctx, list()))
	time.Sleep(2 * grace)
	_, err := os.Stat(filepath.Join(folder, "config.json"))
	require.NoError(t, err, "the copy stays without the list")

	require.NoError(t, k8s.Create(ctx, list()))
	eventually(t, "found again", func() bool { return lmnOf(t, name).Status.ModelStatus["kept"] == v1alpha1.ModelDownloaded })
	jobs := &batchv1.JobList{}
	require.NoError(t, k8s.List(ctx, jobs, client.InNamespace(jobNamespace), client.MatchingLabels{modelcache.NodeLabel: name}))
	assert.Len(t, jobs.Items, 1, "the copy kept is not downloaded again")
	stop()
}

// TestNamespaceCacheKeepsItsOwnCopy: a namespace's cache of a cluster
// cache's URI is downloaded into a copy of its own, by a Job in its own
// namespace; each cache's state is its own copy's.
func TestNamespaceCacheKeepsItsOwnCopy(t *testing.T) {
	const name = "tenant-node"
	ctx, root, uri, stop := runNode(t, name)
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
		{SourceModelUri: uri, ModelName: "admins", NodeGroup: group},
		{SourceModelUri: uri, ModelName: "tenants", Namespace: "team", NodeGroup: group},
	}}}))
	eventually(t, "both downloaded", func() bool {
		st := lmnOf(t, name).Status.ModelStatus
		return st["admins"] == v1alpha1.ModelDownloaded && st[v1alpha1.StatusKey("team", "tenants")] == v1alpha1.ModelDownloaded
	})
	for _, key := range []string{v1alpha1.StorageKey(uri), v1alpha1.CopyKey("team", uri)} {
		_, err := os.Stat(filepath.Join(root, "models", key, "config.json"))
		assert.NoError(t, err, "the copy in models/%s", key)
	}
	assert.NotEqual(t, v1alpha1.StorageKey(uri), v1alpha1.CopyKey("team", uri))
	for ns, want := range map[string]int{jobNamespace: 1, "team": 1} {
		jobs := &batchv1.JobList{}
		require.NoError(t, k8s.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{modelcache.NodeLabel: name}))
		assert.Len(t, jobs.Items, want, "download Jobs in %s", ns)
	}
	stop()
}

// TestOversizedCopyFails: a copy larger than its cache's declared
// modelSize fails with both figures and is deleted, and is not downloaded
// again while the cache declares less; a larger modelSize downloads it.
func TestOversizedCopyFails(t *testing.T) {
	const name = "oversize-node"
	ctx, root, uri, stop := runNode(t, name)
	small := resource.MustParse("1Ki")
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
		{SourceModelUri: uri, ModelName: "liar", NodeGroup: group, ModelSize: &small}}}}))
	eventually(t, "the copy failed", func() bool { return lmnOf(t, name).Status.ModelStatus["liar"] == v1alpha1.ModelDownloadError })
	d := lmnOf(t, name).Status.Models["liar"]
	assert.Equal(t, "ModelTooLarge", d.Reason)
	assert.Contains(t, d.Message, fmt.Sprintf("is %d bytes, and the cache declares modelSize 1Ki (1024 bytes)", len(modelFiles["config.json"])+4096))
	left, err := os.ReadDir(filepath.Join(root, "models", v1alpha1.StorageKey(uri)))
	require.NoError(t, err)
	assert.Empty(t, left, "the oversized copy is deleted (its empty folder stays for its volume)")
	time.Sleep(3 * time.Second)
	jobs := &batchv1.JobList{}
	require.NoError(t, k8s.List(ctx, jobs, client.InNamespace(jobNamespace), client.MatchingLabels{modelcache.NodeLabel: name}))
	assert.Len(t, jobs.Items, 1, "not downloaded again while the cache declares less")

	bigger := resource.MustParse("1Mi")
	updateList(t, name, func(n *v1alpha1.LocalModelNode) { n.Spec.LocalModels[0].ModelSize = &bigger })
	eventually(t, "downloaded once it fits", func() bool { return lmnOf(t, name).Status.ModelStatus["liar"] == v1alpha1.ModelDownloaded })
	stop()
}

// TestChangedCopyIsReported: a copy whose files change after its download
// (a pod that mounted it writable) is reported as failed, naming both
// digests, with an Event, and is not deleted; put back as it was, it is
// Downloaded again.
func TestChangedCopyIsReported(t *testing.T) {
	const name = "verify-node"
	ctx, root, uri, stop := runNode(t, name)
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
		{SourceModelUri: uri, ModelName: "watched", NodeGroup: group}}}}))
	eventually(t, "downloaded", func() bool { return lmnOf(t, name).Status.ModelStatus["watched"] == v1alpha1.ModelDownloaded })
	digest := lmnOf(t, name).Status.Models["watched"].Digest

	config := filepath.Join(root, "models", v1alpha1.StorageKey(uri), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"architectures":["Evil"]}`), 0o644))
	eventually(t, "the change reported", func() bool { return lmnOf(t, name).Status.ModelStatus["watched"] == v1alpha1.ModelDownloadError })
	d := lmnOf(t, name).Status.Models["watched"]
	assert.Equal(t, "CopyChanged", d.Reason)
	assert.Contains(t, d.Message, "its digest was "+digest+" and is ")
	assert.Equal(t, digest, d.Digest, "the digest it was downloaded with stays")
	eventually(t, "the Event", func() bool { return hasEvent(ctx, name, "CopyChanged", "watched: the files of the copy") })
	_, err := os.Stat(config)
	require.NoError(t, err, "a changed copy is not deleted: pods may read it")

	require.NoError(t, os.WriteFile(config, []byte(modelFiles["config.json"]), 0o644))
	eventually(t, "as it was again", func() bool { return lmnOf(t, name).Status.ModelStatus["watched"] == v1alpha1.ModelDownloaded })
	stop()
}

// TestBoundFolderKept: a folder no cache wants any more stays while a
// volume of it exists (a claim bound to it, which Kubernetes keeps while a
// pod mounts it), for longer than the grace period; once the volume goes,
// the folder goes after the grace period.
func TestBoundFolderKept(t *testing.T) {
	const name = "bound-node"
	ctx, root, uri, stop := runNode(t, name)
	require.NoError(t, k8s.Create(ctx, &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.LocalModelNodeSpec{LocalModels: []v1alpha1.LocalModelInfo{
		{SourceModelUri: uri, ModelName: "mounted", NodeGroup: group}}}}))
	eventually(t, "downloaded", func() bool { return lmnOf(t, name).Status.ModelStatus["mounted"] == v1alpha1.ModelDownloaded })
	key := v1alpha1.StorageKey(uri)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "serval-model-mounted-" + name,
		Labels: map[string]string{modelcache.CopyLabel: key, modelcache.GroupNameLabel: group}},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/models/" + key}}}}
	require.NoError(t, k8s.Create(ctx, pv))
	eventually(t, "the folder in use", func() bool { return slices.Contains(lmnOf(t, name).Status.InUse, group+"/"+key) })

	updateList(t, name, func(n *v1alpha1.LocalModelNode) { n.Spec.LocalModels = nil })
	time.Sleep(2 * grace)
	_, err := os.Stat(filepath.Join(root, "models", key, "config.json"))
	require.NoError(t, err, "a bound folder stays")

	// Deleted and gone: no controller here takes the volume's protection
	// finalizer off, as Kubernetes' does once no claim binds it.
	require.NoError(t, k8s.Delete(ctx, pv))
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(pv), pv))
	pv.Finalizers = nil
	require.NoError(t, client.IgnoreNotFound(k8s.Update(ctx, pv)))
	eventually(t, "the folder deleted", func() bool { _, err := os.Stat(filepath.Join(root, "models", key)); return os.IsNotExist(err) })
	stop()
}
