package dev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/operator"
	"github.com/serval-dev/serval/pkg/sandbox"
	"github.com/serval-dev/serval/pkg/testenv"
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
	sb, err := sandbox.Start(ctx, sandbox.Options{
		CRDPaths: []string{"config/crd/bases"}, Scheme: operator.Scheme(), Progress: o.Out,
	})
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
	managerDone, err := startServal(mgrCtx, sb, root, o.Out)
	defer func() { stopManager(); <-managerDone }()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nServal is running. Explore the cluster with:\n  bin/kubectl --kubeconfig %s get inferenceservices,pods -A\n\n", sb.KubeconfigPath)
	fmt.Fprintln(o.Out, "Note: pods run on simulated nodes (kwok): they go Running and Ready, but no container runs, so no model is actually loaded or served.")
	if !o.NoSample {
		if err := runSample(ctx, sb.Client, root, o); err != nil {
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

// startServal installs the default runtimes and serval-config and starts the
// manager; the returned channel closes when the manager has stopped.
func startServal(ctx context.Context, sb *sandbox.Sandbox, root string, out io.Writer) (<-chan struct{}, error) {
	done := make(chan struct{})
	fail := func(err error) (<-chan struct{}, error) { close(done); return done, err }
	c := sb.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ManagerNamespace}}); err != nil {
		return fail(err)
	}
	runtimes, err := filepath.Glob(filepath.Join(root, "config/runtimes/*.yaml"))
	if err != nil {
		return fail(err)
	}
	for _, f := range runtimes {
		if err := applyFile(ctx, c, f, ""); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(out, "Installed %d ClusterServingRuntimes from config/runtimes.\n", len(runtimes))
	if err := applyFile(ctx, c, filepath.Join(root, "config/dev/serval-config.yaml"), ManagerNamespace); err != nil {
		return fail(err)
	}
	mgr, err := operator.New(ctx, sb.Env.Config, operator.Options{Namespace: ManagerNamespace, MetricsAddr: "0", HealthProbeAddr: "0"})
	if err != nil {
		return fail(err)
	}
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(out, "manager:", err)
		}
	}()
	fmt.Fprintln(out, "Started the Serval manager.")
	return done, nil
}

// applyFile creates every document of a YAML file; namespaced objects without
// a namespace go to defaultNS (or "default").
func applyFile(ctx context.Context, c client.Client, path, defaultNS string) error {
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	if defaultNS == "" {
		defaultNS = "default"
	}
	for _, obj := range objs {
		if obj.GetNamespace() == "" && obj.GetKind() != "ClusterServingRuntime" {
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
