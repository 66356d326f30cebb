package dev

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/serval-dev/serval/pkg/console"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/operator"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
)

// ManagerNamespace is where the dev manager runs and serval-config lives.
const ManagerNamespace = "serval-system"

// Options configures a dev session.
type Options struct {
	// Sample is the name of a file in config/samples, without .yaml.
	Sample string
	// NoSample starts the cluster and Serval without applying a sample.
	NoSample bool
	// ExitWhenReady stops everything once the sample is Ready (for scripts).
	ExitWhenReady bool
	// ReadyTimeout bounds the wait for Ready.
	ReadyTimeout time.Duration
	// Out receives the progress.
	Out io.Writer
}

// SandboxOptions are the sandbox settings of `serval dev`: Serval's CRDs,
// the upstream ones and LeaderWorkerSet's (whose controller the sandbox
// plays, see sandbox.PlayLeaderWorkerSets); two GPU nodes, for the
// multi-node samples.
func SandboxOptions(progress io.Writer) sandbox.Options {
	paths := []string{"config/crd/bases"}
	if lws, err := testenv.UpstreamCRDPathsOf(testenv.LWS); err == nil {
		paths = append(paths, lws...)
	} else {
		fmt.Fprintln(progress, "LeaderWorkerSet's CRD is not installed:", err)
	}
	return sandbox.Options{CRDPaths: paths, Scheme: operator.Scheme(), Progress: progress, GPUNodes: 2}
}

// Run runs a dev session until ctx ends (Ctrl-C), or until the sample is
// Ready with ExitWhenReady. Everything it started is stopped before it returns.
func Run(ctx context.Context, o Options) error {
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 3 * time.Minute
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	if !o.NoSample {
		// Before the cluster: a sample that cannot run is refused at once.
		if _, _, err := checkSample(root, o.Sample); err != nil {
			return err
		}
	}
	sb, err := sandbox.Start(ctx, SandboxOptions(o.Out))
	if err != nil {
		return fmt.Errorf("start the local cluster: %w", err)
	}
	defer func() {
		fmt.Fprintln(o.Out, "Stopping the local cluster...")
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(o.Out, "stop:", err)
		}
	}()
	mgrCtx, stopManager := context.WithCancel(ctx)
	managerDone, err := StartServal(mgrCtx, sb, o.Out)
	defer func() { stopManager(); <-managerDone }()
	if err != nil {
		return err
	}
	if stays := !o.ExitWhenReady || o.NoSample; stays {
		// A cluster that stops once the sample is Ready is not one to
		// explore.
		url, consoleDone, err := StartConsole(mgrCtx, sb)
		if err != nil {
			return err
		}
		defer func() { stopManager(); <-consoleDone }()
		fmt.Fprintf(o.Out, "\nServal is running. Explore the cluster with:\n  bin/kubectl --kubeconfig %s get inferenceservices,pods -A\nor in the read-only console:\n  %s\n\n", sb.KubeconfigPath, url)
	}
	fmt.Fprintln(o.Out, "Note: pods run on simulated nodes (kwok): they go Running and Ready, but no container runs, so no model is actually loaded or served.")
	if !o.NoSample {
		// The sample's players (the node agents) stop with the manager,
		// before the cluster.
		if err := runSample(mgrCtx, sb, root, o); err != nil {
			return err
		}
		if o.ExitWhenReady {
			return nil
		}
	}
	fmt.Fprintln(o.Out, "\nPress Ctrl-C to stop.")
	<-ctx.Done()
	return nil
}

// StartConsole serves `serval console` on a free local port with the
// sandbox's admin credentials until ctx ends, and returns the address to
// open (with its secret). The channel closes once it has stopped.
func StartConsole(ctx context.Context, sb *sandbox.Sandbox) (string, <-chan struct{}, error) {
	done := make(chan struct{})
	s, err := console.New(console.Options{Config: sb.Env.Config, Auth: console.AuthLocal, DefaultNamespace: "default"})
	if err != nil {
		close(done)
		return "", done, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		close(done)
		return "", done, err
	}
	go func() {
		defer close(done)
		_ = console.Serve(ctx, ln, s)
	}()
	return s.URL("http://" + ln.Addr().String()), done, nil
}

// StartServal runs Serval in the sandbox as `serval dev` does: the manager
// in-process with its webhooks registered by URL and its own certificates,
// then the default runtimes and serval-config (admitted by those webhooks).
// The returned channel closes when the manager has stopped after ctx ends.
func StartServal(ctx context.Context, sb *sandbox.Sandbox, out io.Writer) (<-chan struct{}, error) {
	done := make(chan struct{})
	fail := func(err error) (<-chan struct{}, error) { close(done); return done, err }
	root, err := testenv.RepoRoot()
	if err != nil {
		return fail(err)
	}
	c := sb.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ManagerNamespace}}); err != nil {
		return fail(err)
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := servalwebhook.InstallLocal(ctx, c, filepath.Join(root, "config/webhook/manifests.yaml"), "https://"+addr); err != nil {
		return fail(err)
	}
	mgr, err := operator.New(ctx, sb.Env.Config, operator.Options{
		Namespace: ManagerNamespace, MetricsAddr: "0", HealthProbeAddr: "0",
		WebhookHost: "127.0.0.1", WebhookPort: port, CertDir: filepath.Join(sb.Dir, "webhook-certs"), CertMode: operator.CertModeSelf,
	})
	if err != nil {
		return fail(err)
	}
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(out, "manager:", err)
		}
	}()
	if err := waitServing(ctx, addr); err != nil {
		return done, err
	}
	fmt.Fprintf(out, "Started the Serval manager; admission webhooks at https://%s.\n", addr)
	return done, install(ctx, c, root, out)
}

// install applies the default runtimes, serval-config and Knative's feature
// flags as Serval needs them (the sandbox plays a Knative installation).
func install(ctx context.Context, c client.Client, root string, out io.Writer) error {
	runtimes, err := filepath.Glob(filepath.Join(root, "config/runtimes/*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range runtimes {
		if err := ApplyFile(ctx, c, f, ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Installed %d ClusterServingRuntimes from config/runtimes.\n", len(runtimes))
	containers, err := filepath.Glob(filepath.Join(root, "config/storagecontainers/*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range containers {
		if err := ApplyFile(ctx, c, f, ""); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Installed %d ClusterStorageContainers from config/storagecontainers.\n", len(containers))
	presets, err := filepath.Glob(filepath.Join(root, "config/llmisvcconfig/*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range presets {
		if err := ApplyFile(ctx, c, f, ManagerNamespace); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Installed %d LLMInferenceServiceConfigs (presets) from config/llmisvcconfig.\n", len(presets))
	if err := ApplyFile(ctx, c, filepath.Join(root, "config/rbac/endpoint-picker.yaml"), ""); err != nil {
		return err
	}
	if err := ApplyFile(ctx, c, filepath.Join(root, "config/rbac/routing-sidecar.yaml"), ""); err != nil {
		return err
	}
	if err := ApplyFile(ctx, c, filepath.Join(root, "config/dev/knative-config-features.yaml"), ""); err != nil {
		return err
	}
	// The model caches' download Jobs run here (serval-config's
	// localModel.jobNamespace; the chart creates it too).
	if err := ApplyFile(ctx, c, filepath.Join(root, "config/dev/localmodel-jobs-namespace.yaml"), ""); err != nil {
		return err
	}
	return ApplyFile(ctx, c, filepath.Join(root, "config/dev/serval-config.yaml"), ManagerNamespace)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitServing waits until the webhook server accepts TLS connections.
func waitServing(ctx context.Context, addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a liveness probe, no data is sent
		if err == nil {
			_ = conn.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("the webhook server did not start on %s", addr)
}

// ApplyFile creates every document of a YAML file; namespaced objects without
// a namespace go to defaultNS (or "default").
func ApplyFile(ctx context.Context, c client.Client, path, defaultNS string) error {
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	if defaultNS == "" {
		defaultNS = "default"
	}
	for _, obj := range objs {
		namespaced, err := c.IsObjectNamespaced(obj)
		if err != nil {
			return fmt.Errorf("%s %s from %s: %w", obj.GetKind(), obj.GetName(), path, err)
		}
		if namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace(defaultNS)
		}
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %s %s from %s: %w", obj.GetKind(), obj.GetName(), path, err)
		}
	}
	return nil
}

func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}
