package clustertest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/operator"
)

const managerNamespace = "serval-system"

var (
	env *testenv.Environment
	k8s client.Client
	// managerCache is the running manager's cache: a test waits for it to
	// show a write before checking that the write woke no reconcile.
	managerCache cache.Cache
	// writes counts the manager's write requests (anything but GET, LIST,
	// WATCH and Events).
	writes writeCounter
)

type writeCounter struct {
	mu    sync.Mutex
	total atomic.Int64
	paths []string
	// reads are the GETs of single objects (not lists or watches).
	reads []string
}

func (w *writeCounter) RoundTrip(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		switch {
		case strings.Contains(req.URL.Path, "/events"):
		case req.Method != http.MethodGet:
			w.total.Add(1)
			w.mu.Lock()
			w.paths = append(w.paths, req.Method+" "+req.URL.Path)
			w.mu.Unlock()
		case req.URL.Query().Get("watch") == "":
			w.mu.Lock()
			w.reads = append(w.reads, req.URL.Path)
			w.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// readsInto returns the GETs into namespace ns so far.
func (w *writeCounter) readsInto(ns string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range w.reads {
		if strings.Contains(p, "/namespaces/"+ns+"/") {
			out = append(out, p)
		}
	}
	return out
}

// since returns the writes after the n-th into namespace ns.
func (w *writeCounter) since(n int64, ns string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range w.paths[n:] {
		if strings.Contains(p, "/namespaces/"+ns+"/") {
			out = append(out, p)
		}
	}
	return out
}

// quiesce waits until no write into ns has been made for 700ms: reconciles
// triggered earlier have settled, so a window counted from now measures only
// what happens next, even on a loaded machine.
func quiesce(t *testing.T, ns string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last, stableSince := len(writes.since(0, ns)), time.Now()
	for time.Since(stableSince) < 700*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("writes into %s did not settle", ns)
		}
		time.Sleep(100 * time.Millisecond)
		if n := len(writes.since(0, ns)); n != last {
			last, stableSince = n, time.Now()
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reconciles counts every controller's finished reconciles by object;
// reconciled reads the InferenceService controller's.
var reconciles = testenv.NewReconciles()

var reconciled isvcReconciles

type isvcReconciles struct{}

func (isvcReconciles) of(ns, name string) int { return reconciles.Of("inferenceservice", ns, name) }

// waitReconciled waits until ns/name has finished a reconcile after the
// count before: evidence that a change was seen.
func waitReconciled(t *testing.T, ns, name string, before int) {
	t.Helper()
	eventually(t, "a reconcile of "+ns+"/"+name, func() bool { return reconciled.of(ns, name) > before })
}

// noReconcileStorm checks, after evidence that ns/name was reconciled, that
// it is reconciled at most max more times over d.
func noReconcileStorm(t *testing.T, ns, name string, d time.Duration, max int) {
	t.Helper()
	before := reconciled.of(ns, name)
	require.Positive(t, before, "no evidence that %s/%s was ever reconciled", ns, name)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if n := reconciled.of(ns, name) - before; n > max {
			t.Fatalf("%s/%s reconciled %d times in %s: a requeue storm", ns, name, n, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMain(m *testing.M) {
	ctrl.SetLogger(reconciles.Logger(zap.New(zap.WriteTo(os.Stderr), zap.Level(testenv.ManagerLogLevel())).GetSink()))
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: operator.Scheme()},
		func(e *testenv.Environment) {
			env, k8s = e, e.Client
			if err := startManager(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		})
}

func startManager() error {
	return env.StartManager(managerNamespace, writes.RoundTrip, func(ctx context.Context, cfg *rest.Config) (testenv.Starter, error) {
		mgr, err := operator.New(ctx, cfg, operator.Options{Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0"})
		if err == nil {
			managerCache = mgr.GetCache()
		}
		return mgr, err
	})
}

// consistently checks that cond holds for the whole duration.
func consistently(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventually polls cond until it holds, or fails the test after 30 s.
var eventually = testenv.Eventually
