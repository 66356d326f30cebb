package activator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"
	"google.golang.org/grpc"

	"github.com/serval-dev/serval/pkg/router"
)

// ServerConfig is how the activator serves: its requests on Addr, with
// the InferenceGraph router's hardened server (Limits), KEDA's scaler on
// ScalerAddr and the metrics on MetricsAddr.
type ServerConfig struct {
	Addr, ScalerAddr, MetricsAddr string
	Limits                        router.ServerLimits
	// DrainDelay is how long readiness fails before the held requests are
	// answered and the listener closes; ShutdownTimeout how long requests
	// being forwarded may then take.
	DrainDelay, ShutdownTimeout time.Duration
	// RegisterScaler registers the KEDA scaler's service on the gRPC
	// server (kedascaler.Register).
	RegisterScaler func(*grpc.Server)
	// Registry serves the metrics.
	Registry *prometheus.Registry
}

// Serve serves a until ctx ends, then drains: /readyz fails for
// DrainDelay, the held requests are answered 503, the listener closes and
// the requests being forwarded get ShutdownTimeout to finish.
func Serve(ctx context.Context, a *Activator, c ServerConfig, log *slog.Logger) error {
	draining := make(chan struct{})
	// The activator is the handler itself: a ServeMux would redirect or
	// clean a path that the replica should get as it was sent.
	srv := router.NewServer(a, c.Limits, log)
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	ln = router.LimitListener(ln, c.Limits)
	errs := make(chan error, 3)
	go func() { errs <- srv.Serve(ln) }()

	// KEDA's scaler: a few connections, each with its streams, and small
	// messages (a ScaledObject's reference) are all it takes.
	gs := grpc.NewServer(grpc.MaxConcurrentStreams(scalerMaxStreams), grpc.MaxRecvMsgSize(scalerMaxMessageBytes))
	if c.RegisterScaler != nil {
		c.RegisterScaler(gs)
	}
	sl, err := net.Listen("tcp", c.ScalerAddr)
	if err != nil {
		_ = srv.Close()
		return err
	}
	sl = netutil.LimitListener(sl, scalerMaxConnections)
	go func() { errs <- gs.Serve(sl) }()

	metrics := http.NewServeMux()
	metrics.Handle("/metrics", promhttp.HandlerFor(c.Registry, promhttp.HandlerOpts{}))
	metrics.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		select {
		case <-draining:
			http.Error(w, "draining", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	})
	metrics.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	ms := &http.Server{Addr: c.MetricsAddr, Handler: metrics, ReadHeaderTimeout: 10 * time.Second}
	go func() { errs <- ms.ListenAndServe() }()
	log.Info("Serving", "addr", ln.Addr().String(), "scaler", sl.Addr().String(), "metrics", c.MetricsAddr)

	select {
	case err := <-errs:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	case <-ctx.Done():
	}
	close(draining)
	time.Sleep(c.DrainDelay)
	a.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	// Not GracefulStop: KEDA's push streams never end on their own; cut,
	// KEDA opens them again on another replica.
	gs.Stop()
	_ = ms.Shutdown(sctx)
	return err
}

// The bounds of the scaler's gRPC server.
const (
	scalerMaxConnections  = 64
	scalerMaxStreams      = 1024
	scalerMaxMessageBytes = 64 << 10
)
