package operator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/boundedevents"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
	"github.com/serval-dev/serval/pkg/controller/llmconfig"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload/knative"
	"github.com/serval-dev/serval/pkg/requestmetrics"
	"github.com/serval-dev/serval/pkg/statusmetrics"
	"github.com/serval-dev/serval/pkg/storage"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
	"github.com/serval-dev/serval/pkg/webhook/certs"
)

// Options configures the manager.
type Options struct {
	// Namespace is the manager's own namespace, home of serval-config.
	Namespace string
	// WatchNamespaces limits InferenceServices and children to these
	// namespaces; empty means all.
	WatchNamespaces []string
	// MetricsAddr and HealthProbeAddr are bind addresses; "0" disables.
	MetricsAddr, HealthProbeAddr string
	// InsecureMetrics serves /metrics over plain HTTP to anyone who reaches
	// it. By default they are served over HTTPS, to callers whose bearer
	// token the API server authenticates (TokenReview) and authorises for
	// GET /metrics (SubjectAccessReview).
	InsecureMetrics bool
	// LeaderElection enables leader election in Namespace.
	LeaderElection bool
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election
	// (controller-runtime's defaults, 15 s, 10 s and 2 s, when zero).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// MaxConcurrentReconciles is the number of InferenceServices reconciled
	// at once (DefaultMaxConcurrentReconciles when zero).
	MaxConcurrentReconciles int
	// WebhookPort enables the webhook server on WebhookHost:WebhookPort
	// (0 disables it); CertDir holds its certificate.
	WebhookHost string
	WebhookPort int
	CertDir     string
	// CertMode is CertModeSelf (the manager keeps its own certificate) or
	// CertModeExternal (files in CertDir provided from outside, such as by
	// cert-manager).
	CertMode string
	// WebhookServiceName is the Service in front of the webhook server; with
	// CertModeSelf the certificate names it (and localhost, 127.0.0.1).
	WebhookServiceName string
	// CertRotationInterval is how often CertModeSelf checks the certificate.
	CertRotationInterval time.Duration
	// KnativeNamespace is Knative Serving's namespace, home of its
	// config-features ConfigMap (DefaultKnativeNamespace when empty).
	KnativeNamespace string
	// QPS and Burst limit the manager's requests to the API server on the
	// client side (DefaultQPS and DefaultBurst when zero; a negative QPS
	// leaves the limiting to the API server's priority and fairness).
	QPS   float32
	Burst int
	// APICompression asks the API server to gzip its responses. Off by
	// default: the manager talks to the API server over the cluster network,
	// and gzip costs CPU on both ends for every watch event it receives.
	APICompression bool
	// PprofAddr serves Go's profiles (/debug/pprof) when set; "" or "0"
	// disables.
	PprofAddr string
	// RouterImage runs InferenceGraph routers unless serval-config's
	// router.image names another: the manager's own image, which holds the
	// router binary.
	RouterImage string
	// GraphLimits bound the depth and the step calls per request of every
	// InferenceGraph (v1alpha1.DefaultGraphLimits when zero).
	GraphLimits v1alpha1.GraphLimits
	// listErrors records why informers fail to sync (New sets it).
	listErrors *listErrors
	// SkipNameValidation allows a second manager in the same process (tests);
	// controller-runtime otherwise refuses duplicate controller names.
	SkipNameValidation bool
}

// The certificate modes.
const (
	CertModeSelf     = "self"
	CertModeExternal = "external"
)

// Secure metrics ask the API server who a caller is and whether it may read
// /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// metricsOptions serves the metrics with controller-runtime's secure
// serving, HTTPS behind an authentication and authorisation filter
// (metricsAuthFilter), unless InsecureMetrics. The
// serving certificate is generated in memory: scrapers verify the caller's
// side (a token), not the server's, as the chart's ServiceMonitor does.
func metricsOptions(o Options) metricsserver.Options {
	if o.InsecureMetrics {
		return metricsserver.Options{BindAddress: o.MetricsAddr}
	}
	return metricsserver.Options{BindAddress: o.MetricsAddr, SecureServing: true, FilterProvider: metricsAuthFilter}
}

// Leader election holds a Lease in the manager's namespace and records
// core Events (client-go's resource lock speaks core/v1 Events) about it.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=serval-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=serval-system

// LeaderElectionID names the lease of the manager's leader election.
const LeaderElectionID = "serval-manager.serving.serval.dev"

// DefaultMaxConcurrentReconciles is the reconcile concurrency by default,
// of InferenceServices and of LLMInferenceServices each. A reconcile mostly
// waits on the API server (a create per child, a status patch), so during
// a rollout of many services the workers, not the
// CPU, bound the manager: measured with 300 at once on 2 cores, 4 workers
// took 1.5-1.6 times as long as Kubernetes itself needs, 16 workers 1.2-1.3
// times (docs/benchmarks.md). Idle workers cost nothing, and the client's
// rate limit (DefaultQPS) still caps the load they can make.
const DefaultMaxConcurrentReconciles = 16

func durationOrNil(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}

// The client-side limits by default: high enough that rolling out a
// thousand InferenceServices at once (about seven requests each) is never
// held back by the client, low enough that a manager gone wrong cannot flood
// the API server faster than its priority and fairness settle it.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// DefaultKnativeNamespace is where Knative Serving is installed by default.
const DefaultKnativeNamespace = "knative-serving"

// CertSecretName is the Secret where CertModeSelf keeps the CA and the
// serving certificate.
const CertSecretName = "serval-webhook-certs"

// Scheme returns the scheme with the core types and Serval's API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		gatewayv1.Install, igwapi.AddToScheme, v1beta1.AddToScheme, v1alpha1.AddToScheme, v1alpha2.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // only on a programming error in the scheme builders
		}
	}
	return s
}

// labelExists selects the objects that carry a label, whatever its value.
func labelExists(label string) labels.Selector {
	req, err := labels.NewRequirement(label, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid requirement
	}
	return labels.NewSelector().Add(*req)
}

// cacheOptions keeps the cache lean. By default an informer holds only the
// objects with Serval's component label, which every owner kind's children
// and pods carry: so it is for every child kind of the registry and for
// Pods, one informer per kind for all owner kinds, including optional kinds whose CRD appears after the
// start. Serval's own kinds and the CRDs are cached whole (but for the
// managedFields and kubectl's copy of an InferenceService's or graph's
// spec, see leanObject); ConfigMaps only in the manager's namespace
// (serval-config) and Knative's config-features by name. Secrets and
// ServiceAccounts are never cached (read uncached, by name, only when
// credentials need them), but for the metadata of the Secrets named
// storage-config.
func cacheOptions(o Options) cache.Options {
	everything := cache.ByObject{Label: labels.Everything()}
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	configMaps := map[string]cache.Config{o.Namespace: {}}
	if o.KnativeNamespace != o.Namespace {
		configMaps[o.KnativeNamespace] = cache.Config{FieldSelector: fields.OneTermEqualSelector("metadata.name", knative.FeaturesConfigMap)}
	}
	opts := cache.Options{
		DefaultTransform: leanTransform,
		// Why an informer cannot list is kept for Run's error.
		DefaultWatchErrorHandler: o.listErrors.handler,
		// Every child of every owner kind, and every pod of theirs, carries
		// the component label.
		DefaultLabelSelector: labelExists(v1beta1.ComponentLabel),
		ByObject: map[client.Object]cache.ByObject{
			&v1beta1.InferenceService{}:           everything,
			&v1alpha1.ServingRuntime{}:            everything,
			&v1alpha1.ClusterServingRuntime{}:     everything,
			&v1alpha1.ClusterStorageContainer{}:   everything,
			&v1alpha1.InferenceGraph{}:            everything,
			&v1alpha2.LLMInferenceService{}:       everything,
			&v1alpha2.LLMInferenceServiceConfig{}: everything,
			&v1alpha1.LocalModelCache{}:           everything,
			&v1alpha1.LocalModelNamespaceCache{}:  everything,
			&v1alpha1.LocalModelNodeGroup{}:       everything,
			&v1alpha1.LocalModelNode{}:            everything,
			// Nodes, for the node groups' members (see leanNode).
			&corev1.Node{}: everything,
			crds:           everything,
			// The metadata of the Secrets named storage-config, and of no
			// other: one created late lets the InferenceServices that wait
			// for it recover (their data is read uncached, when needed).
			inferenceservice.StorageConfigSecrets(): {Label: labels.Everything(),
				Field: fields.OneTermEqualSelector("metadata.name", storage.DefaultStorageConfigSecret)},
			&corev1.ConfigMap{}: {Label: labels.Everything(), Namespaces: configMaps},
		},
	}
	opts.DefaultNamespaces = watchedNamespaces(o)
	return opts
}

// watchedNamespaces are the namespaces a cache watches; nil means all.
func watchedNamespaces(o Options) map[string]cache.Config {
	if len(o.WatchNamespaces) == 0 {
		return nil
	}
	out := map[string]cache.Config{}
	for _, ns := range o.WatchNamespaces {
		out[ns] = cache.Config{}
	}
	return out
}

// New returns a manager with the InferenceService reconciler registered.
func New(ctx context.Context, cfg *rest.Config, o Options) (*Manager, error) {
	if o.Namespace == "" {
		return nil, fmt.Errorf("the manager's namespace is required")
	}
	if o.KnativeNamespace == "" {
		o.KnativeNamespace = DefaultKnativeNamespace
	}
	cfg = clientConfig(cfg, o)
	o.listErrors = newListErrors()
	server, certManager, err := webhookServer(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		PprofBindAddress: o.PprofAddr,
		WebhookServer:    server,
		Controller:       ctrlconfig.Controller{SkipNameValidation: &o.SkipNameValidation},
		Scheme:           Scheme(),
		Cache:            cacheOptions(o),
		// Unstructured reads (Knative Services) come from the cache too.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ServiceAccount{}}, Unstructured: true}},
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.HealthProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.Namespace,
		// On SIGTERM the leader gives its lease up, so a rolling update of
		// the manager does not wait for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 durationOrNil(o.LeaseDuration),
		RenewDeadline:                 durationOrNil(o.RenewDeadline),
		RetryPeriod:                   durationOrNil(o.RetryPeriod),
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := setup(ctx, mgr, o); err != nil {
		return nil, err
	}
	if certManager != nil {
		if err := mgr.Add(certManager); err != nil {
			return nil, err
		}
		// Not ready while the API server would refuse this replica's
		// certificate (a caBundle reset by a re-applied manifest, until it
		// is repaired).
		if err := mgr.AddReadyzCheck("webhook-ca", func(req *http.Request) error { return certManager.CheckServedTrusted(req.Context()) }); err != nil {
			return nil, err
		}
	}
	return &Manager{Manager: mgr, listErrors: o.listErrors, stopped: make(chan struct{})}, nil
}

// clientConfig is cfg with the client-side limits of o and a transport that
// counts requests by verb and resource.
func clientConfig(cfg *rest.Config, o Options) *rest.Config {
	cfg = requestmetrics.Wrap(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	cfg.DisableCompression = !o.APICompression
	return cfg
}

// webhookServer returns the webhook server, or nil when disabled. With
// CertModeSelf it makes sure a certificate is in CertDir first, since the
// server loads it at start, and returns the manager that renews it.
func webhookServer(ctx context.Context, cfg *rest.Config, o Options) (webhook.Server, *certs.Manager, error) {
	if o.WebhookPort == 0 {
		return nil, nil, nil
	}
	opts := webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.CertDir}
	switch o.CertMode {
	case CertModeExternal:
		return webhook.NewServer(opts), nil, nil
	case CertModeSelf, "":
	default:
		return nil, nil, fmt.Errorf("unknown certificate mode %q: use %s or %s", o.CertMode, CertModeSelf, CertModeExternal)
	}
	// Uncached, and able to watch the Secret and the configurations by name.
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, nil, err
	}
	svc := o.WebhookServiceName
	if svc == "" {
		svc = "serval-webhook-service"
	}
	m := &certs.Manager{
		Client: direct, Namespace: o.Namespace, SecretName: CertSecretName, CertDir: o.CertDir,
		DNSNames:         []string{svc + "." + o.Namespace + ".svc", svc + "." + o.Namespace + ".svc.cluster.local", "localhost"},
		IPs:              []net.IP{net.ParseIP("127.0.0.1")},
		MutatingWebhooks: []string{servalwebhook.MutatingConfigName}, ValidatingWebhooks: []string{servalwebhook.ValidatingConfigName},
		CheckInterval: o.CertRotationInterval,
	}
	if err := m.Ensure(ctx); err != nil {
		return nil, nil, fmt.Errorf("prepare the webhook certificate: %w", err)
	}
	// The manager's pair is read in one read: a reload never reads a new
	// key beside the old certificate.
	opts.TLSOpts = append(opts.TLSOpts, func(c *tls.Config) { c.GetCertificate = m.GetCertificate })
	return webhook.NewServer(opts), m, nil
}

var (
	metricsOnce sync.Once
	metrics     *inferenceservice.Metrics
	statuses    = statusmetrics.New()
	certExpiry  = certs.NewExpiry()
)

// sharedMetrics registers Serval's metrics once per process: tests and
// `serval dev` may start more than one manager.
func sharedMetrics() *inferenceservice.Metrics {
	metricsOnce.Do(func() {
		metrics = inferenceservice.NewMetrics(crmetrics.Registry)
		crmetrics.Registry.MustRegister(undecodableObjects, statuses, certExpiry)
		if err := errors.Join(requestmetrics.Register(crmetrics.Registry), servalwebhook.RegisterMetrics(crmetrics.Registry)); err != nil {
			panic(err) // registered once, by this function
		}
	})
	return metrics
}

func setup(ctx context.Context, mgr manager.Manager, o Options) error {
	metrics := sharedMetrics()
	statuses.SetReader(mgr.GetCache())
	if o.WebhookPort != 0 {
		certExpiry.SetDir(o.CertDir)
	}
	recorder := boundedevents.Recorder(mgr.GetEventRecorder("serval-manager"))
	store := config.NewStore(mgr.GetClient(), o.Namespace, recorder)
	r := &inferenceservice.Reconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         recorder,
		Config:           store,
		KnativeFeatures:  knative.NewFeaturesStore(mgr.GetClient(), o.KnativeNamespace),
		KnativeNamespace: o.KnativeNamespace,
		Applier:          apply.New(mgr.GetClient(), mgr.GetAPIReader(), metrics),
		Concurrency:      o.MaxConcurrentReconciles,
	}
	if r.Concurrency == 0 {
		r.Concurrency = DefaultMaxConcurrentReconciles
	}
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	r.ImageVolumes = &inferenceservice.ImageVolumes{DryRun: mgr.GetClient(), Version: func() (string, error) {
		v, err := dc.ServerVersion()
		if err != nil {
			return "", err
		}
		return v.GitVersion, nil
	}}
	if err := pipeline.IndexChildren(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the InferenceService controller: %w", err)
	}
	if err := setupGraphs(ctx, mgr, o, r); err != nil {
		return fmt.Errorf("set up the InferenceGraph controller: %w", err)
	}
	llm := &llminferenceservice.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
		Config: store, Applier: r.Applier, Namespace: o.Namespace, Concurrency: r.Concurrency}
	if err := llm.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the LLMInferenceService controller: %w", err)
	}
	presets := &llmconfig.Reconciler{Client: mgr.GetClient(), Recorder: recorder, Namespace: o.Namespace}
	if err := presets.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("set up the LLMInferenceServiceConfig controller: %w", err)
	}
	if err := setupLocalModels(ctx, mgr, o, r); err != nil {
		return fmt.Errorf("set up the model cache controllers: %w", err)
	}
	if o.WebhookPort != 0 {
		if err := servalwebhook.Setup(mgr, store, o.graphLimits()); err != nil {
			return fmt.Errorf("set up the webhooks: %w", err)
		}
	}
	if err := watchUndecodable(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("informers", cacheSynced(mgr.GetCache(), inferenceservice.WatchedObjects()))
}

// cacheSynced fails readiness while an informer has not synced: a replica
// that cannot list a kind (a missing RBAC rule, an API server that keeps
// failing the list) serves nothing, and must not look ready. Besides the
// informers that exist, it checks those of every watched kind, which the
// controller only creates when it starts: it creates them itself once the
// cache runs (creating them before would make the cache's start wait for
// them with no timeout, instead of the controller's start failing after its
// cache-sync timeout).
func cacheSynced(c cache.Cache, watched []client.Object) func(*http.Request) error {
	return func(req *http.Request) error { return informersSynced(req.Context(), c, watched) }
}

// informersSynced returns nil once every informer of c, and those of the
// watched kinds, has synced.
func informersSynced(ctx context.Context, c cache.Cache, watched []client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the informer caches have not started or synced yet")
	}
	for _, obj := range watched {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("the informer of %T: %w", obj, err)
		}
		if !inf.HasSynced() {
			return fmt.Errorf("the informer of %T has not synced; see the manager's log for the list that fails", obj)
		}
	}
	return nil
}

// graphLimits are the graph limits with their defaults filled in.
func (o Options) graphLimits() v1alpha1.GraphLimits {
	l := o.GraphLimits
	if l.MaxDepth <= 0 {
		l.MaxDepth = v1alpha1.DefaultGraphLimits.MaxDepth
	}
	if l.MaxStepCalls <= 0 {
		l.MaxStepCalls = v1alpha1.DefaultGraphLimits.MaxStepCalls
	}
	return l
}
