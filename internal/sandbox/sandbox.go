package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
)

// DefaultControllers are the kube-controller-manager controllers the sandbox
// runs: all but the service-account token controller, which needs a signing key
// the sandbox does not set up.
const DefaultControllers = "*,-serviceaccount-token"

// envtestProcesses are the commands envtest starts for the sandbox.
var envtestProcesses = []string{"etcd", "kube-apiserver"}

// Options configures a Sandbox. The zero value is a usable default.
type Options struct {
	// Dir holds the component logs, the kubeconfig and the data directories. A
	// temporary directory, removed by Stop, when empty; kept when set.
	Dir string
	// KubeconfigPath is where the admin kubeconfig is written; Dir/kubeconfig
	// when empty.
	KubeconfigPath string
	// Nodes is the number of plain fake nodes (default 3).
	Nodes int
	// GPUNodes is the number of fake nodes with nvidia.com/gpu capacity
	// (default 1; negative for none).
	GPUNodes int
	// PodsPerNode is each node's pod capacity (default 110).
	PodsPerNode int
	// Controllers is kube-controller-manager's --controllers (DefaultControllers
	// when empty). Benchmarks leave out horizontalpodautoscaling: with no
	// metrics API it only burns CPU.
	Controllers string
	// CRDPaths, SkipUpstreamCRDs and Scheme are passed to internal/testenv.
	CRDPaths         []string
	SkipUpstreamCRDs bool
	Scheme           *runtime.Scheme
	// Progress receives one line per start-up step; nothing when nil.
	Progress io.Writer
	// APIServerFlags are extra kube-apiserver flags, as name -> value (fault
	// tests shorten watch timeouts and compaction, for one).
	APIServerFlags map[string]string
	// ControllerManagerFlags are extra kube-controller-manager flags, such as
	// "--kube-api-qps=200" (benchmarks lift its client rate limit).
	ControllerManagerFlags []string
}

// Sandbox is a running local cluster.
type Sandbox struct {
	// players are the in-process stand-ins (node agents) still running:
	// Stop waits for them, once their context has ended, before it stops
	// the API server they talk to.
	players sync.WaitGroup

	// Env is the API server and etcd, with an admin Config and Client.
	Env *testenv.Environment
	// Client is an admin client with the Options' scheme.
	Client client.Client
	// KubeconfigPath is the admin kubeconfig written at start.
	KubeconfigPath string
	// Dir holds the logs (Dir/logs) and data of the sandbox.
	Dir string

	opts    Options
	tempDir bool
	procs   []*process
	envPIDs []int
	reaper  *reaper
	// restarted are kube-apiservers RestartAPIServer started, the latest
	// one apiServerPID.
	restarted    []*process
	apiServerPID int
}

// Start brings up the cluster: API server and etcd, then the controller
// manager, scheduler and kwok, then the fake nodes, and waits until the nodes
// are Ready. On error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	opts = withDefaults(opts)
	s := &Sandbox{opts: opts, Dir: opts.Dir}
	if err := s.start(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func withDefaults(o Options) Options {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.GPUNodes == 0 {
		o.GPUNodes = 1
	}
	if o.PodsPerNode == 0 {
		o.PodsPerNode = 110
	}
	if o.Controllers == "" {
		o.Controllers = DefaultControllers
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

func (s *Sandbox) progress(format string, args ...any) {
	fmt.Fprintf(s.opts.Progress, "sandbox: "+format+"\n", args...)
}

func (s *Sandbox) start(ctx context.Context) error {
	began := time.Now()
	var err error
	if s.reaper, err = startReaper(); err != nil {
		return err
	}
	if err := s.makeDirs(); err != nil {
		return err
	}
	s.progress("starting etcd and kube-apiserver")
	// Another sandbox in this process has its own etcd and API server: only
	// the children that appear now are this sandbox's.
	before, err := childPIDs(envtestProcesses...)
	if err != nil {
		return fmt.Errorf("list child processes: %w", err)
	}
	s.Env, err = testenv.Start(testenv.Options{
		CRDPaths: s.opts.CRDPaths, SkipUpstreamCRDs: s.opts.SkipUpstreamCRDs, Scheme: s.opts.Scheme,
		// As on a real cluster: a pod naming a missing ServiceAccount fails.
		ServiceAccountAdmission: true,
		APIServerFlags:          apiServerFlags(s.opts.APIServerFlags),
	})
	if err != nil {
		return err
	}
	s.Client = s.Env.Client
	after, err := childPIDs(envtestProcesses...)
	if err != nil {
		return fmt.Errorf("find envtest processes: %w", err)
	}
	s.envPIDs = newPIDs(before, after)
	for _, pid := range s.envPIDs {
		s.reaper.watchPID(pid)
	}
	if err := os.WriteFile(s.KubeconfigPath, s.Env.KubeConfig, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := s.startComponents(); err != nil {
		return err
	}
	s.progress("creating %d nodes and %d GPU nodes", s.opts.Nodes, max(s.opts.GPUNodes, 0))
	if err := s.createNodes(ctx); err != nil {
		return err
	}
	if err := s.waitNodesReady(ctx); err != nil {
		return err
	}
	s.progress("ready in %s; kubeconfig %s", time.Since(began).Round(100*time.Millisecond), s.KubeconfigPath)
	return nil
}

func (s *Sandbox) makeDirs() error {
	if s.Dir == "" {
		dir, err := os.MkdirTemp("", "serval-sandbox-")
		if err != nil {
			return err
		}
		s.Dir, s.tempDir = dir, true
		s.reaper.watchDir(dir)
	}
	if err := os.MkdirAll(s.LogDir(), 0o755); err != nil {
		return err
	}
	s.KubeconfigPath = s.opts.KubeconfigPath
	if s.KubeconfigPath == "" {
		s.KubeconfigPath = filepath.Join(s.Dir, "kubeconfig")
	}
	return nil
}

// LogDir is the directory with one log file per component.
func (s *Sandbox) LogDir() string { return filepath.Join(s.Dir, "logs") }

// PIDs returns the process IDs of every component the sandbox started.
func (s *Sandbox) PIDs() []int {
	pids := append([]int(nil), s.envPIDs...)
	for _, p := range s.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// Stop stops every component, then etcd and the API server, and removes the
// sandbox directory when it was a temporary one. It is safe to call twice.
func (s *Sandbox) Stop() error {
	var errs []error
	waitPlayers(&s.players, 15*time.Second)
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop(10 * time.Second)
	}
	s.procs = nil
	for _, p := range s.restarted {
		p.stop(10 * time.Second)
	}
	s.restarted = nil
	if s.Env != nil {
		if err := s.Env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop API server and etcd: %w", err))
		}
		s.Env = nil
	}
	if s.tempDir {
		if err := os.RemoveAll(s.Dir); err != nil {
			errs = append(errs, err)
		}
		s.tempDir = false
	}
	if s.reaper != nil {
		s.reaper.release()
		s.reaper = nil
	}
	return errors.Join(errs...)
}

// ServiceCIDR is the sandbox's range of Service cluster IPs: a /16, room for
// 65,000 Services (envtest's default /24 holds 253, fewer than a benchmark
// of 1,000 InferenceServices needs).
const ServiceCIDR = "10.96.0.0/16"

// apiServerFlags is the sandbox's kube-apiserver flags, extra ones last.
func apiServerFlags(extra map[string]string) map[string]string {
	flags := map[string]string{"service-cluster-ip-range": ServiceCIDR}
	for k, v := range extra {
		flags[k] = v
	}
	return flags
}

// waitPlayers waits for the players whose context has ended, at most d: a
// player whose context still runs is not waited for past it.
func waitPlayers(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
