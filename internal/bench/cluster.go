package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/pkg/operator"
)

// benchControllers are kube-controller-manager's controllers in a bench
// cluster: the sandbox's, without the HPA controller. The sandbox has no
// metrics API, so that controller would only fail to read metrics for every
// HPA every 15 s and write their status: load on the API server that is
// neither Serval's nor the floor's, and varies from run to run.
const benchControllers = sandbox.DefaultControllers + ",-horizontalpodautoscaling"

// benchControllerManagerFlags lift kube-controller-manager's client rate
// limit (20 requests a second, bursts of 30, by default). Turning a Deployment
// into a running pod costs it about five writes (the ReplicaSet, the pod, the
// status of both), so at the default it makes about four pods a second
// whatever the operator does: the floor and Serval alike would wait on it,
// and the ratio would hide what Serval adds.
var benchControllerManagerFlags = []string{"--kube-api-qps=1000", "--kube-api-burst=2000"}

// startCluster starts a fresh sandbox sized for n pods on 2 nodes, in
// dir/name when dir is set.
func startCluster(ctx context.Context, n int, dir, name string, subj subject, progress io.Writer) (*sandbox.Sandbox, error) {
	if dir != "" {
		dir = filepath.Join(dir, name)
	}
	return sandbox.Start(ctx, sandbox.Options{
		Dir:   dir,
		Nodes: 2, GPUNodes: -1, PodsPerNode: n*max(subj.podsPerService, 1)/2 + 100, Controllers: benchControllers,
		ControllerManagerFlags: benchControllerManagerFlags,
		CRDPaths:               []string{"config/crd/bases"}, SkipUpstreamCRDs: !subj.upstreamCRDs, Scheme: operator.Scheme(),
		Progress: progress,
	})
}

// apiServerRequests is the number of requests the API server has served.
func apiServerRequests(ctx context.Context, cs kubernetes.Interface) (float64, error) {
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	ms, err := parseMetrics(data)
	if err != nil {
		return 0, err
	}
	return ms.sum("apiserver_request_total", nil), nil
}

// waitQuiet waits until the API server serves fewer than 5 requests a
// second (the nodes' and components' heartbeats), so that a run starts on a
// settled cluster. It gives up after a minute: the run goes on, noted.
func waitQuiet(ctx context.Context, cs kubernetes.Interface, progress io.Writer) error {
	const window = 2 * time.Second
	deadline := time.Now().Add(time.Minute)
	last, err := apiServerRequests(ctx, cs)
	if err != nil {
		return err
	}
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
		}
		now, err := apiServerRequests(ctx, cs)
		if err != nil {
			return err
		}
		if now-last < 5*window.Seconds() {
			return nil
		}
		last = now
	}
	fmt.Fprintln(progress, "bench: the cluster did not go quiet within a minute; going on")
	return nil
}

// parallel runs do(i) for i in [0, n) on workers goroutines, and returns the
// first error.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// readObject reads a one-document YAML manifest.
func readObject(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// freeAddr returns a free loopback address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// play runs the subject's stand-in controller, if it has one, until the
// returned function is called; its failure is reported to progress (the
// run then waits for Ready in vain and says so).
func play(ctx context.Context, subj subject, sb *sandbox.Sandbox, progress io.Writer) (stop func()) {
	if subj.play == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := subj.play(ctx, sb); err != nil {
			fmt.Fprintf(progress, "bench: the stand-in for the Gateway stopped: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }
}
