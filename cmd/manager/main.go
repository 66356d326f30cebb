// Command manager runs the Serval operator.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/serval-dev/serval/pkg/version"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/operator"
)

// flags are the manager's command line.
type flags struct {
	o                     operator.Options
	watchNamespaces       string
	qps, memoryLimitRatio float64
	showVersion           bool
	metricsSecure         bool
	cacheSyncTimeout      time.Duration
	zap                   zap.Options
}

// bindFlags defines every flag of the manager on fs. docs/configuration.md
// lists them all; a test compares the two.
func bindFlags(fs *flag.FlagSet) *flags {
	f := &flags{}
	o := &f.o
	fs.StringVar(&o.Namespace, "namespace", envOr("POD_NAMESPACE", "serval-system"), "The manager's namespace, home of serval-config.")
	fs.StringVar(&o.KnativeNamespace, "knative-namespace", operator.DefaultKnativeNamespace, "Knative Serving's namespace, whose config-features ConfigMap Serval reads.")
	fs.StringVar(&f.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces to serve; empty serves all.")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", `Metrics address; "0" disables.`)
	fs.StringVar(&o.HealthProbeAddr, "health-probe-bind-address", ":8081", `Health probe address; "0" disables.`)
	fs.BoolVar(&f.metricsSecure, "metrics-secure", true, "Serve /metrics over HTTPS to callers whose bearer token may GET /metrics (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone who reaches the port.")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a replica waits, after the leader stops renewing, before it takes over.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it gives up leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to acquire or renew the lease.")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", operator.DefaultMaxConcurrentReconciles, "InferenceServices reconciled at once, and LLMInferenceServices.")
	fs.Float64Var(&f.qps, "kube-api-qps", operator.DefaultQPS, "Requests per second to the API server, on average, before the client holds them back; negative leaves the limiting to the API server.")
	fs.IntVar(&o.Burst, "kube-api-burst", operator.DefaultBurst, "Requests to the API server allowed in a burst above --kube-api-qps.")
	fs.BoolVar(&o.APICompression, "kube-api-compression", false, "Ask the API server to gzip its responses, watch events included: less traffic, more CPU on both ends.")
	fs.Float64Var(&f.memoryLimitRatio, "memory-limit-ratio", operator.DefaultMemoryLimitRatio, "The Go runtime's soft memory limit as a share of the container's memory limit, so that the collector works harder near the limit instead of the manager being killed; 0 disables; GOMEMLIMIT, when set, wins.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "", `Address that serves Go's profiles at /debug/pprof; empty or "0" disables.`)
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "Port of the admission webhook server; 0 disables the webhooks.")
	fs.StringVar(&o.WebhookHost, "webhook-host", "", "Address the webhook server binds to; empty binds all.")
	fs.StringVar(&o.CertDir, "cert-dir", "/tmp/serval-webhook-certs", "Directory of the webhook serving certificate (tls.crt, tls.key).")
	fs.StringVar(&o.CertMode, "cert-mode", operator.CertModeSelf, `"self": the manager creates, stores, injects and rotates its certificate; "external": certificates in --cert-dir come from outside (cert-manager).`)
	fs.StringVar(&o.WebhookServiceName, "webhook-service-name", "serval-webhook-service", "The Service in front of the webhooks, named in the self-managed certificate.")
	fs.StringVar(&o.RouterImage, "router-image", operator.DefaultRouterImage(), "Image of InferenceGraph routers, unless serval-config's router.image names another; the manager's own image holds the router.")
	fs.IntVar(&o.GraphLimits.MaxDepth, "graph-max-depth", v1alpha1.DefaultGraphLimits.MaxDepth, "The longest chain of nodes a request may pass in an InferenceGraph: admission refuses deeper graphs, and their routers enforce it.")
	fs.IntVar(&o.GraphLimits.MaxStepCalls, "graph-max-step-calls", v1alpha1.DefaultGraphLimits.MaxStepCalls, "The most calls to services one request may make in an InferenceGraph: admission refuses graphs that could make more, and their routers enforce it.")
	fs.DurationVar(&f.cacheSyncTimeout, "cache-sync-timeout", operator.DefaultCacheSyncTimeout, "How long the informer caches may take to sync before the manager exits non-zero, naming each kind it could not list and why (a missing RBAC rule), so that its pod restarts with the reason in view.")
	fs.BoolVar(&f.showVersion, "version", false, "Print the version and exit.")
	f.zap.BindFlags(fs)
	return f
}

func main() {
	f := bindFlags(flag.CommandLine)
	flag.Parse()
	o, zapOpts, memoryLimitRatio := f.o, f.zap, f.memoryLimitRatio
	if f.showVersion {
		fmt.Println(version.String())
		return
	}
	logger := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(logger)
	// client-go's own messages (informers, leader election) in the same log,
	// at the same verbosity (--zap-log-level=4 shows watches that expire).
	klog.SetLogger(logger)
	log := ctrl.Log.WithName("setup")
	soft, err := operator.SetMemoryLimit(memoryLimitRatio)
	if err != nil {
		log.Error(err, "Invalid --memory-limit-ratio")
		os.Exit(1)
	}
	if soft > 0 {
		log.Info("Go's soft memory limit set from the container's", "bytes", soft, "ratio", memoryLimitRatio)
	}
	o.QPS = float32(f.qps)
	o.InsecureMetrics = !f.metricsSecure
	if f.watchNamespaces != "" {
		o.WatchNamespaces = strings.Split(f.watchNamespaces, ",")
	}

	ctx := ctrl.SetupSignalHandler()
	mgr, err := operator.New(ctx, ctrl.GetConfigOrDie(), o)
	if err != nil {
		log.Error(err, "Unable to set up the manager")
		os.Exit(1)
	}
	log.Info("Starting the manager", "version", version.String(), "namespace", o.Namespace, "watchNamespaces", o.WatchNamespaces)
	if err := mgr.Run(ctx, f.cacheSyncTimeout, operator.DefaultShutdownTimeout); err != nil {
		log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
