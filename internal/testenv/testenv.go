package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options configures an Environment.
type Options struct {
	// CRDPaths are files or directories with Serval's own CRDs (or any other
	// CRDs a test needs), relative to the repository root or absolute.
	CRDPaths []string
	// SkipUpstreamCRDs leaves out the Gateway API, Knative and Istio CRDs.
	SkipUpstreamCRDs bool
	// Scheme is used for the returned client; client-go's scheme when nil.
	Scheme *runtime.Scheme
	// APIServerFlags are extra kube-apiserver flags, as name -> value.
	APIServerFlags map[string]string
	// ServiceAccountAdmission keeps the API server's ServiceAccount admission
	// plugin on, as on a real cluster (envtest turns it off, since nothing
	// creates the default ServiceAccounts): a pod naming a missing
	// ServiceAccount is then refused. Only for a full cluster, whose
	// controller-manager creates the default ServiceAccounts.
	ServiceAccountAdmission bool
	// Webhook installs admission webhook configurations into the API server.
	Webhook envtest.WebhookInstallOptions
}

// Environment is a running kube-apiserver + etcd with CRDs installed.
type Environment struct {
	*envtest.Environment
	// Config is an admin rest.Config for the API server.
	Config *rest.Config
	// Client is a client on Config with the Options' scheme.
	Client client.Client

	cleanups []func()
}

// AddCleanup registers f to run at Stop, before the API server stops, in
// reverse order of registration: a manager watching the API server must end
// first, or the API server waits for its watches to drain.
func (e *Environment) AddCleanup(f func()) { e.cleanups = append(e.cleanups, f) }

// Start starts etcd and kube-apiserver from BinDir and installs the CRDs.
// The caller must call Stop.
func Start(opts Options) (*Environment, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	var crdPaths []string
	for _, p := range opts.CRDPaths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		crdPaths = append(crdPaths, p)
	}
	if !opts.SkipUpstreamCRDs {
		upstream, err := UpstreamCRDPaths()
		if err != nil {
			return nil, err
		}
		crdPaths = append(crdPaths, upstream...)
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ErrorIfCRDPathMissing:    true,
		CRDDirectoryPaths:        crdPaths,
		CRDInstallOptions:        envtest.CRDInstallOptions{Scheme: scheme},
		WebhookInstallOptions:    opts.Webhook,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	apiServer := env.ControlPlane.GetAPIServer()
	for name, value := range opts.APIServerFlags {
		apiServer.Configure().Set(name, value)
	}
	if opts.ServiceAccountAdmission {
		apiServer.Configure().Disable("disable-admission-plugins")
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("start envtest from %s: %w", bin, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("client for envtest: %w", err)
	}
	return &Environment{Environment: env, Config: cfg, Client: c}, nil
}

// Stop stops the API server and etcd and removes their temporary directories.
func (e *Environment) Stop() error {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	e.cleanups = nil
	return e.Environment.Stop()
}

// RunMain is the body of a test package's TestMain: it starts one Environment,
// hands it to setup (which stores it for the tests), runs the tests and stops
// the environment. It exits the process with the tests' result.
func RunMain(m *testing.M, opts Options, setup func(*Environment)) {
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		os.Exit(1)
	}
	setup(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
