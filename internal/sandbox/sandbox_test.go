package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/sandbox"
)

var sb *sandbox.Sandbox

func TestMain(m *testing.M) {
	if os.Getenv("SANDBOX_HELPER") == "1" {
		runHelperSandbox()
	}
	var err error
	sb, err = sandbox.Start(context.Background(), sandbox.Options{SkipUpstreamCRDs: true, Progress: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := sb.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

const timeout = 60 * time.Second

func makeDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "example.com/server:1"}}},
			},
		},
	}
}

func waitFor(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; component logs in %s", what, sb.LogDir())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podsOf(ctx context.Context, t *testing.T, app string) []corev1.Pod {
	pods := &corev1.PodList{}
	require.NoError(t, sb.Client.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"app": app}))
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// TestDeploymentAvailableAndPodReplaced: the scheduler, the controllers and
// kwok together take a Deployment to Available, and a deleted Pod is replaced.
func TestDeploymentAvailableAndPodReplaced(t *testing.T) {
	ctx := context.Background()
	dep := makeDeployment("web", 3)
	require.NoError(t, sb.Client.Create(ctx, dep))
	start := time.Now()
	waitFor(t, "Deployment Available with 3 ready replicas", func(ctx context.Context) bool {
		got := &appsv1.Deployment{}
		if err := sb.Client.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil {
			return false
		}
		return got.Status.ReadyReplicas == 3 && deploymentAvailable(got)
	})
	t.Logf("Deployment Available after %s", time.Since(start).Round(time.Millisecond))

	pods := podsOf(ctx, t, "web")
	require.Len(t, pods, 3)
	for _, p := range pods {
		assert.NotEmpty(t, p.Spec.NodeName, "pod %s scheduled", p.Name)
		assert.Equal(t, corev1.PodRunning, p.Status.Phase, "pod %s running", p.Name)
	}
	victim := pods[0].Name
	require.NoError(t, sb.Client.Delete(ctx, &pods[0]))
	waitFor(t, "a replacement pod", func(ctx context.Context) bool {
		now := podsOf(ctx, t, "web")
		if len(now) != 3 {
			return false
		}
		for _, p := range now {
			if p.Name == victim || p.Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestGarbageCollection: deleting a Deployment deletes its ReplicaSet through
// the controller-manager's garbage collector.
func TestGarbageCollection(t *testing.T) {
	ctx := context.Background()
	dep := makeDeployment("collected", 1)
	require.NoError(t, sb.Client.Create(ctx, dep))
	var rsName string
	waitFor(t, "the ReplicaSet", func(ctx context.Context) bool {
		list := &appsv1.ReplicaSetList{}
		require.NoError(t, sb.Client.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"app": "collected"}))
		if len(list.Items) == 1 {
			rsName = list.Items[0].Name
		}
		return rsName != ""
	})
	require.NoError(t, sb.Client.Delete(ctx, dep, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	waitFor(t, "the ReplicaSet to be garbage-collected", func(ctx context.Context) bool {
		err := sb.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: rsName}, &appsv1.ReplicaSet{})
		return apierrors.IsNotFound(err)
	})
}

// TestGPUPodLandsOnGPUNode: a pod asking for a GPU is scheduled on a GPU node.
func TestGPUPodLandsOnGPUNode(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "server", Image: "example.com/server:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{sandbox.GPUResource: resource.MustParse("1")}},
		}}},
	}
	require.NoError(t, sb.Client.Create(ctx, pod))
	waitFor(t, "the GPU pod to be scheduled", func(ctx context.Context) bool {
		got := &corev1.Pod{}
		require.NoError(t, sb.Client.Get(ctx, client.ObjectKeyFromObject(pod), got))
		pod = got
		return got.Spec.NodeName != ""
	})
	assert.True(t, strings.HasPrefix(pod.Spec.NodeName, "sandbox-gpu-"), "scheduled on %s", pod.Spec.NodeName)
}

// TestStopLeavesNoProcess starts a second, small sandbox and checks that Stop
// ends every process it started and removes its temporary directory.
func TestStopLeavesNoProcess(t *testing.T) {
	small, err := sandbox.Start(context.Background(), sandbox.Options{Nodes: 1, GPUNodes: 1, SkipUpstreamCRDs: true})
	require.NoError(t, err)
	pids, dir := small.PIDs(), small.Dir
	require.Len(t, pids, 5, "etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok")
	for _, pid := range pids {
		require.True(t, sandbox.Alive(pid), "pid %d running before Stop", pid)
	}
	require.NoError(t, small.Stop())
	for _, pid := range pids {
		assert.False(t, sandbox.Alive(pid), "pid %d still running after Stop", pid)
	}
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "sandbox directory %s removed", dir)
}

// TestReaperCleansUpAfterKilledParent runs a sandbox in a child process, kills
// that process with SIGKILL (no chance to clean up), and checks that the
// reaper ends every component and removes the directory.
func TestReaperCleansUpAfterKilledParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaperCleansUpAfterKilledParent$")
	cmd.Env = append(os.Environ(), "SANDBOX_HELPER=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var pids []int
	var dir string
	// The helper prints "dir D" and one "pid N" per component, then "ready".
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 512)
	deadline := time.Now().Add(timeout)
	for !strings.Contains(string(buf), "ready\n") && time.Now().Before(deadline) {
		n, err := out.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err != nil {
			break
		}
	}
	for _, line := range strings.Split(string(buf), "\n") {
		var pid int
		if _, err := fmt.Sscanf(line, "pid %d", &pid); err == nil {
			pids = append(pids, pid)
		}
		if d, ok := strings.CutPrefix(line, "dir "); ok {
			dir = d
		}
	}
	require.Len(t, pids, 5, "helper output: %s", buf)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	waitFor(t, "the reaper to kill every component", func(context.Context) bool {
		for _, pid := range pids {
			if sandbox.Alive(pid) {
				return false
			}
		}
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
}

// runHelperSandbox is the child process of TestReaperCleansUpAfterKilledParent:
// it starts a sandbox, reports its PIDs and waits to be killed.
func runHelperSandbox() {
	s, err := sandbox.Start(context.Background(), sandbox.Options{Nodes: 1, GPUNodes: 1, SkipUpstreamCRDs: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("dir %s\n", s.Dir)
	for _, pid := range s.PIDs() {
		fmt.Printf("pid %d\n", pid)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// TestMissingServiceAccountIsRefused: as on a real cluster, the API server
// refuses a pod whose ServiceAccount does not exist (envtest alone lets it
// through).
func TestMissingServiceAccountIsRefused(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "default"}, Spec: corev1.PodSpec{
		ServiceAccountName: "nobody", Containers: []corev1.Container{{Name: "c", Image: "example.com/c:1"}}}}
	err := sb.Client.Create(context.Background(), pod)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `serviceaccount "nobody" not found`)
}
