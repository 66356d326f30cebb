package bench

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/operator"
	"github.com/serval-dev/serval/pkg/requestmetrics"
)

// Namespace is where the InferenceServices of a run go.
const Namespace = "bench"

// runServal is the run with Serval. It returns its figures and the children
// Serval made, for the floor.
func runServal(ctx context.Context, o Options) (*ServalResult, map[string][]*unstructured.Unstructured, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	subj, err := subjectOf(o.Kind)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(o.Progress, "bench: starting a cluster for the run with Serval (N=%d)\n", o.N)
	sb, err := startCluster(ctx, o.N, o.Dir, "serval", subj, o.Progress)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = sb.Stop() }()
	c := sb.Client
	for _, ns := range []string{dev.ManagerNamespace, Namespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, nil, err
		}
	}
	if err := subj.setup(ctx, c, root); err != nil {
		return nil, nil, err
	}
	stopPlay := play(ctx, subj, sb, o.Progress)
	defer stopPlay()
	if err := dev.ApplyFile(ctx, c, filepath.Join(root, "config/dev/serval-config.yaml"), dev.ManagerNamespace); err != nil {
		return nil, nil, err
	}

	fmt.Fprintln(o.Progress, "bench: building and starting the manager")
	bin, err := sandbox.BuildBinary(root, "./cmd/manager", sb.Dir)
	if err != nil {
		return nil, nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	probeAddr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	args := append([]string{"--namespace=" + dev.ManagerNamespace, "--webhook-port=0",
		// Plain metrics: the bench scrapes them on loopback without a token.
		"--metrics-bind-address=" + metricsAddr, "--metrics-secure=false", "--health-probe-bind-address=" + probeAddr}, o.ManagerArgs...)
	mgr, err := sb.StartProcessWithEnv("manager", bin, o.ManagerEnv, args...)
	if err != nil {
		return nil, nil, err
	}
	if err := waitReady(ctx, "http://"+probeAddr+"/readyz", mgr); err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(sb.Env.Config)
	if err != nil {
		return nil, nil, err
	}
	if err := waitQuiet(ctx, cs, o.Progress); err != nil {
		return nil, nil, err
	}

	sample, err := readObject(filepath.Join(root, subj.sample))
	if err != nil {
		return nil, nil, err
	}
	watcher, err := client.NewWithWatch(sb.Env.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	tracker := newReadyTracker(o.N, func(obj client.Object) string { return obj.GetName() }, subj.ready)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() { _ = tracker.run(watchCtx, watcher, subj.list(), Namespace) }()

	metricsURL := "http://" + metricsAddr + "/metrics"
	before, err := scrape(metricsURL)
	if err != nil {
		return nil, nil, err
	}
	cpuBefore, err := cpuSeconds(mgr.PID())
	if err != nil {
		return nil, nil, err
	}
	span, err := startSpanCPU(sb)
	if err != nil {
		return nil, nil, err
	}

	fmt.Fprintf(o.Progress, "bench: creating %d %ss with %d workers\n", o.N, subj.kind, o.Workers)
	tracker.begin()
	err = parallel(ctx, o.N, o.Workers, func(ctx context.Context, i int) error {
		return c.Create(ctx, isvcFrom(sample, i))
	})
	if err != nil {
		return nil, nil, err
	}
	if err := tracker.wait(ctx, readyTimeout(o.N)); err != nil {
		return nil, nil, fmt.Errorf("waiting for Ready: %w (the manager's log: %s)", err, mgr.LogPath)
	}
	readyAt := tracker.percentiles()
	// What the last Ready ones triggered (their Events go out a moment
	// after the status) belongs to the run, not to the idle window.
	after, err := settle(ctx, metricsURL)
	if err != nil {
		return nil, nil, err
	}
	apiCPU, componentCPU, err := span.since()
	if err != nil {
		return nil, nil, err
	}
	res := &ServalResult{Ready: readyAt, APIServerCPUSeconds: apiCPU, ComponentsCPUSeconds: componentCPU, ManagerArgs: args, ManagerEnv: o.ManagerEnv}
	requestFigures(res, before, after, o.N, subj.controller)
	fmt.Fprintf(o.Progress, "bench: all %d Ready after %.1f s; watching the idle manager for %s\n", o.N, res.Ready.P100, o.IdleWindow)

	time.Sleep(o.IdleWindow)
	idle, err := scrape(metricsURL)
	if err != nil {
		return nil, nil, err
	}
	res.IdleWindowSecond = o.IdleWindow.Seconds()
	res.IdleRequests = idle.sum(requestmetrics.MetricName, nil) - after.sum(requestmetrics.MetricName, nil)
	res.IdleWrites = writes(idle, nil) - writes(after, nil)
	res.IdleByVerbAndResource = map[string]float64{}
	ia, ii := byVerbAndResource(after), byVerbAndResource(idle)
	for k, v := range ii {
		if d := v - ia[k]; d > 0 {
			res.IdleByVerbAndResource[k] = d
		}
	}
	cpuAfter, err := cpuSeconds(mgr.PID())
	if err != nil {
		return nil, nil, err
	}
	res.CPUSeconds = cpuAfter - cpuBefore
	mem, err := readMemory(mgr.PID())
	if err != nil {
		return nil, nil, err
	}
	res.PeakRSSMiB, res.FileRSSMiB = mem.Peak, mem.File
	res.LiveHeapMiB = idle.sum("go_gc_heap_live_bytes", nil) / (1 << 20)
	children, err := readChildren(ctx, c, o.N, subj)
	if err != nil {
		return nil, nil, err
	}
	return res, children, nil
}

// settle waits until the manager has sent no request for a second (at most
// 30 s), and returns its metrics then.
func settle(ctx context.Context, url string) (metrics, error) {
	last, err := scrape(url)
	if err != nil {
		return nil, err
	}
	stableSince := time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		now, err := scrape(url)
		if err != nil {
			return nil, err
		}
		if now.sum(requestmetrics.MetricName, nil) != last.sum(requestmetrics.MetricName, nil) {
			stableSince = time.Now()
		} else if time.Since(stableSince) >= time.Second {
			return now, nil
		}
		last = now
	}
	return last, nil
}

// isvcFrom is the sample named for the i-th service of a run.
func isvcFrom(sample *unstructured.Unstructured, i int) *unstructured.Unstructured {
	obj := sample.DeepCopy()
	obj.SetName(fmt.Sprintf("isvc-%05d", i))
	obj.SetNamespace(Namespace)
	return obj
}

// waitReady waits for the manager's /readyz: its caches have synced.
func waitReady(ctx context.Context, url string, mgr *sandbox.Process) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if mgr.Exited() {
			return fmt.Errorf("the manager exited; its log: %s", mgr.LogPath)
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the manager was not ready within 2 minutes; its log: %s", mgr.LogPath)
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

func isEvent(m *dto.Metric) bool { return label(m, "resource") == "events" }

// writes sums the manager's write requests whose labels include want.
func writes(ms metrics, keep func(*dto.Metric) bool) float64 {
	total := 0.0
	for verb, n := range ms.byLabel(requestmetrics.MetricName, "verb", keep) {
		if writeVerbs[verb] {
			total += n
		}
	}
	return total
}

// byVerbAndResource sums the manager's requests by "verb resource".
func byVerbAndResource(ms metrics) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms[requestmetrics.MetricName].GetMetric() {
		out[label(m, "verb")+" "+label(m, "resource")] += m.GetCounter().GetValue()
	}
	return out
}

// requestFigures fills the request and reconcile figures of res from the
// manager's metrics before and after the run.
func requestFigures(res *ServalResult, before, after metrics, n int, controller string) {
	perISVC := float64(n)
	notEvent := func(m *dto.Metric) bool { return !isEvent(m) }
	res.RequestsPerISVC = map[string]float64{}
	b := before.byLabel(requestmetrics.MetricName, "verb", notEvent)
	for verb, v := range after.byLabel(requestmetrics.MetricName, "verb", notEvent) {
		if d := v - b[verb]; d > 0 {
			res.RequestsPerISVC[verb] = d / perISVC
			res.TotalRequestsPerISVC += d / perISVC
			if writeVerbs[verb] {
				res.WritesPerISVC += d / perISVC
			}
		}
	}
	res.ByVerbAndResource = map[string]float64{}
	br := byVerbAndResource(before)
	for k, v := range byVerbAndResource(after) {
		if d := v - br[k]; d > 0 {
			res.ByVerbAndResource[k] = d / perISVC
		}
	}
	events := map[string]string{"resource": "events"}
	res.EventsPerISVC = (after.sum(requestmetrics.MetricName, events) - before.sum(requestmetrics.MetricName, events)) / perISVC
	ctrl := map[string]string{"controller": controller}
	res.Reconciles = after.sum("controller_runtime_reconcile_total", ctrl) - before.sum("controller_runtime_reconcile_total", ctrl)
	h := after.histogram("controller_runtime_reconcile_time_seconds", ctrl).minus(before.histogram("controller_runtime_reconcile_time_seconds", ctrl))
	res.ReconcileP50Ms = h.quantile(0.5) * 1000
	res.ReconcileP99Ms = h.quantile(0.99) * 1000
}

// readChildren reads back the children Serval made, by the service whose
// label they carry, as the floor will create them: what the API server
// filled in dropped.
func readChildren(ctx context.Context, c client.Client, n int, subj subject) (map[string][]*unstructured.Unstructured, error) {
	out := map[string][]*unstructured.Unstructured{}
	label := subj.label
	var gvks []schema.GroupVersionKind
	for _, k := range childkinds.All() {
		if !k.Optional() || subj.upstreamCRDs {
			gvks = append(gvks, k.GVK)
		}
	}
	for _, gvk := range append(gvks, subj.uncached...) {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		err := c.List(ctx, list, client.InNamespace(Namespace), client.HasLabels{label})
		switch {
		case meta.IsNoMatchError(err):
			continue // an optional kind the cluster has no CRD for
		case err != nil:
			return nil, fmt.Errorf("list %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			obj := asCreated(&list.Items[i])
			isvc := obj.GetLabels()[label]
			out[isvc] = append(out[isvc], obj)
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("children of %d services found, want %d", len(out), n)
	}
	return out, nil
}

// asCreated keeps of a live object what a client sends to create it.
func asCreated(live *unstructured.Unstructured) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range live.Object {
		if k != "status" && k != "metadata" {
			obj.Object[k] = v
		}
	}
	obj.SetName(live.GetName())
	obj.SetNamespace(live.GetNamespace())
	obj.SetLabels(live.GetLabels())
	annotations := map[string]string{}
	for k, v := range live.GetAnnotations() {
		if !strings.HasPrefix(k, "deployment.kubernetes.io/") {
			annotations[k] = v
		}
	}
	obj.SetAnnotations(annotations)
	obj.SetOwnerReferences(live.GetOwnerReferences())
	if live.GetKind() == "Service" {
		unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
	}
	return obj
}
