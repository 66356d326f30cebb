package faults

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/operator"
)

var long = flag.Bool("long", false, "run the faults at a larger size (make test-faults)")

// managerBinary is cmd/manager, built once for the package.
var managerBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	root, err := testenv.RepoRoot()
	if err == nil {
		var dir string
		if dir, err = os.MkdirTemp("", "serval-faults-"); err == nil {
			defer os.RemoveAll(dir)
			managerBinary, err = sandbox.BuildBinary(root, "./cmd/manager", dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// size is n, or n times scale with -long.
func size(n, scale int) int {
	if *long {
		return n * scale
	}
	return n
}

// startCluster starts a sandbox with Serval's CRDs, one sklearn runtime and
// the manager's namespace; the test's end stops it.
func startCluster(t *testing.T, flags map[string]string) *sandbox.Sandbox {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true,
		Scheme: operator.Scheme(), APIServerFlags: flags, PodsPerNode: 1000})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sb.Stop() })
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serval-system"}}))
	require.NoError(t, sb.Client.Create(ctx, &v1alpha1.ClusterServingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: "sklearn"},
		Spec: v1alpha1.ServingRuntimeSpec{
			SupportedModelFormats: []v1alpha1.SupportedModelFormat{{Name: "sklearn", AutoSelect: ptr.To(true), Priority: ptr.To[int32](1)}},
			ProtocolVersions:      []v1beta1.Protocol{v1beta1.ProtocolV1},
			ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
				Name: "kserve-container", Image: "kserve/sklearnserver:v0.15.2", Args: []string{"--model_name={{.Name}}"},
			}}},
		},
	}))
	return sb
}

// manager is a Serval manager process and the address of its metrics.
type manager struct {
	*sandbox.Process
	metrics string
}

var managerCount struct {
	sync.Mutex
	n int
}

// startManager runs the manager binary against sb, without webhooks.
func startManager(t *testing.T, sb *sandbox.Sandbox, args ...string) *manager {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	managerCount.Lock()
	managerCount.n++
	name := fmt.Sprintf("manager-%d", managerCount.n)
	managerCount.Unlock()
	args = append([]string{"--namespace=serval-system", "--webhook-port=0", "--health-probe-bind-address=0",
		"--metrics-bind-address=" + addr, "--metrics-secure=false"}, args...)
	p, err := sb.StartProcess(name, managerBinary, args...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			log := p.Log()
			if len(log) > 8000 {
				log = log[len(log)-8000:]
			}
			t.Logf("the end of %s's log:\n%s", name, log)
		}
	})
	return &manager{Process: p, metrics: addr}
}

// metric sums a metric's samples whose labels contain every given pair; -1
// when the manager does not answer.
func (m *manager) metric(name string, labels ...string) float64 {
	resp, err := http.Get("http://" + m.metrics + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	total := 0.0
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		matched := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(line, labels[i]+`="`+labels[i+1]+`"`) {
				matched = false
			}
		}
		if !matched {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total += v
		}
	}
	return total
}

// writes is the number of write requests the manager has sent: its
// client's requests that are not GETs (lists and watches are GETs).
func (m *manager) writes() float64 {
	return m.metric("rest_client_requests_total") - m.metric("rest_client_requests_total", "method", "GET")
}

// createISVCs creates n InferenceServices named prefix-0.. with 16 workers.
func createISVCs(t *testing.T, c client.Client, ns, prefix string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs <- c.Create(context.Background(), isvc(ns, fmt.Sprintf("%s-%d", prefix, i)))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func isvc(ns, name string) *v1beta1.InferenceService {
	return &v1beta1.InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
			ModelFormat:            v1beta1.ModelFormat{Name: "sklearn"},
			PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://models/" + name)},
		}}},
	}
}

// ready counts the Ready InferenceServices of ns, and all of them.
func ready(t *testing.T, c client.Client, ns string) (readyN, total int) {
	t.Helper()
	list := &v1beta1.InferenceServiceList{}
	require.NoError(t, c.List(context.Background(), list, client.InNamespace(ns)))
	for _, i := range list.Items {
		if meta.IsStatusConditionTrue(i.Status.Conditions, v1beta1.ConditionReady) && i.Status.ObservedGeneration == i.Generation {
			readyN++
		}
	}
	return readyN, len(list.Items)
}

// waitFor polls cond every 250 ms until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(start)
}

// waitAllReady waits until all n InferenceServices of ns are Ready; on a
// timeout it shows one that is not.
func waitAllReady(t *testing.T, c client.Client, ns string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		list := &v1beta1.InferenceServiceList{}
		if c.List(context.Background(), list, client.InNamespace(ns)) != nil {
			return
		}
		for _, i := range list.Items {
			if !meta.IsStatusConditionTrue(i.Status.Conditions, v1beta1.ConditionReady) {
				t.Logf("not Ready: %s: generation %d, observed %d, conditions %+v", i.Name, i.Generation, i.Status.ObservedGeneration, i.Status.Conditions)
				return
			}
		}
	})
	return waitFor(t, fmt.Sprintf("all %d InferenceServices of %s Ready", n, ns), timeout, func() bool {
		r, total := ready(t, c, ns)
		return r == n && total == n
	})
}

// checkChildren checks that every InferenceService of ns has exactly its
// children, each labelled and controlled by it: none duplicated, none
// orphaned.
func checkChildren(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	list := &v1beta1.InferenceServiceList{}
	require.NoError(t, c.List(ctx, list, client.InNamespace(ns)))
	uids := map[string]string{}
	for _, i := range list.Items {
		uids[string(i.UID)] = i.Name
	}
	for _, kind := range []struct {
		list   client.ObjectList
		suffix string
	}{{&appsv1.DeploymentList{}, "-predictor"}, {&corev1.ServiceList{}, "-predictor"},
		{&autoscalingv2.HorizontalPodAutoscalerList{}, "-predictor"}, {&networkingv1.IngressList{}, ""}} {
		l := kind.list
		require.NoError(t, c.List(ctx, l, client.InNamespace(ns)))
		items, err := meta.ExtractList(l)
		require.NoError(t, err)
		require.Len(t, items, len(list.Items), "one %T item per InferenceService", l)
		for _, item := range items {
			obj := item.(client.Object)
			owner := metav1.GetControllerOf(obj)
			require.NotNil(t, owner, "%s has its controller", obj.GetName())
			name, ok := uids[string(owner.UID)]
			require.True(t, ok, "%s is controlled by an existing InferenceService", obj.GetName())
			require.Equal(t, name, obj.GetLabels()[v1beta1.InferenceServiceLabel], "%s has its labels", obj.GetName())
			require.Equal(t, name+kind.suffix, obj.GetName())
		}
	}
}
