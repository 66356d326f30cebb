// Command activator is the data plane of scale from zero in Standard
// mode: it takes a component's traffic while the component has no ready
// replica, holds it, tells KEDA (its external push scaler) and forwards
// each held request once a replica is ready. See package activator.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/activator/kedascaler"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/version"
)

func main() {
	var c activator.ServerConfig
	var l activator.Limits
	var namespace, service string
	var port int
	flag.StringVar(&c.Addr, "addr", ":8080", "Address the held traffic is served on.")
	flag.IntVar(&port, "port", 8080, "The port of --addr, which the activator's EndpointSlices name.")
	flag.StringVar(&c.ScalerAddr, "scaler-addr", ":9091", "Address of KEDA's external push scaler (gRPC).")
	flag.StringVar(&c.MetricsAddr, "metrics-addr", ":9090", "Address of /metrics, /healthz and /readyz.")
	flag.StringVar(&namespace, "namespace", os.Getenv("POD_NAMESPACE"), "The activator's namespace.")
	flag.StringVar(&service, "service", "serval-activator", "The activator's Service, whose pods' addresses go into the EndpointSlices it writes.")
	flag.IntVar(&l.MaxHeld, "max-held", activator.DefaultMaxHeld, "The most requests one component holds.")
	flag.Int64Var(&l.MaxBodyBytes, "max-body-bytes", activator.DefaultMaxBodyBytes, "Cap of a held request's body (413 above).")
	flag.Int64Var(&l.MaxHeldBytes, "max-held-bytes", activator.DefaultMaxHeldBytes, "Cap of the bodies held across all components (503 above).")
	flag.DurationVar(&l.HoldTimeout, "hold-timeout", activator.DefaultHoldTimeout, "How long a request is held before a 503.")
	flag.DurationVar(&l.ForwardTimeout, "forward-timeout", activator.DefaultForwardTimeout, "How long a released request's answer may take.")
	flag.DurationVar(&l.RetryAfter, "retry-after", activator.DefaultRetryAfter, "What a 503's Retry-After says.")
	flag.IntVar(&c.Limits.MaxHeaderBytes, "max-header-bytes", 1<<20, "Cap of a request's line and headers, answered 431 above it.")
	flag.IntVar(&c.Limits.MaxConnections, "max-connections", 4096, "Bound of the client connections open at once.")
	flag.DurationVar(&c.Limits.ReadHeaderTimeout, "server-read-header-timeout", 10*time.Second, "Bound of reading a request's line and headers.")
	flag.DurationVar(&c.Limits.ReadTimeout, "server-read-timeout", 60*time.Second, "Bound of reading a whole request, body included.")
	flag.DurationVar(&c.Limits.WriteTimeout, "server-write-timeout", 60*time.Second, "Bound of answering a request that is not held (a held one gets --hold-timeout more).")
	flag.DurationVar(&c.DrainDelay, "drain-delay", 5*time.Second, "On SIGTERM, how long readiness fails before the held requests are answered.")
	flag.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "On SIGTERM, how long requests being forwarded may take.")
	leaderElection := flag.Bool("leader-elect", true, "Elect the replica that writes the EndpointSlices.")
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String())
		return
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	log.SetLogger(zap.New())
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(activator.MemoryLimit(l))
	}
	if err := run(c, l, types.NamespacedName{Namespace: namespace, Name: service}, int32(port), *leaderElection, logger); err != nil {
		logger.Error("The activator stopped with an error", "error", err)
		os.Exit(1)
	}
}

func run(c activator.ServerConfig, l activator.Limits, self types.NamespacedName, port int32, leaderElection bool, logger *slog.Logger) error {
	if self.Namespace == "" {
		return fmt.Errorf("--namespace (or POD_NAMESPACE) is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	hosts := activator.NewHosts()
	a := activator.New(l, hosts.Resolve, nil, activator.NewMetrics(reg))
	c.Registry = reg
	c.RegisterScaler = func(s *grpc.Server) { kedascaler.Register(s, a) }

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: scheme(), Cache: cacheOptions(), Metrics: metricsserver.Options{BindAddress: "0"},
		LeaderElection: leaderElection, LeaderElectionID: "serval-activator", LeaderElectionNamespace: self.Namespace,
	})
	if err != nil {
		return err
	}
	cl := &activator.Cluster{Client: mgr.GetClient(), Activator: a, Hosts: hosts, Self: self, Port: port}
	if err := cl.SetupWithManager(mgr); err != nil {
		return err
	}
	errs := make(chan error, 2)
	go func() { errs <- mgr.Start(ctx) }()
	go func() { errs <- activator.Serve(ctx, a, c, logger) }()
	err = <-errs
	stop()
	if err2 := <-errs; err == nil {
		err = err2
	}
	return err
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}

// cacheOptions keep the activator's cache to Serval's objects: the
// Services that scale from zero, and the EndpointSlices and pods of
// Serval's children (the activator's Service carries the component label
// too, so that its EndpointSlices are among them).
func cacheOptions() cache.Options {
	component, _ := labels.NewRequirement(v1beta1.ComponentLabel, selection.Exists, nil)
	ofServal := labels.NewSelector().Add(*component)
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Service{}:            {Label: labels.SelectorFromSet(labels.Set{v1beta1.ScaleFromZeroLabel: "true"})},
		&discoveryv1.EndpointSlice{}: {Label: ofServal},
		&corev1.Pod{}:                {Label: ofServal},
	}}
}
