package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/http2"
	"golang.org/x/net/netutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// ServerConfig is what Serve serves and how.
type ServerConfig struct {
	Spec    *v1alpha1.InferenceGraphSpec
	Options Options
	// Addr serves the graph; MetricsAddr serves /metrics ("" or "0": none).
	Addr, MetricsAddr string
	// Limits bound the client connections; the graph's routerTimeouts
	// override the read, write and idle timeouts.
	Limits ServerLimits
	// DrainDelay is how long readiness fails before the listener closes;
	// ShutdownTimeout how long requests in flight may then take.
	DrainDelay, ShutdownTimeout time.Duration
	// Pprof serves Go's profiles at /debug/pprof/ on MetricsAddr.
	Pprof bool
	// Listener, when set, is used instead of listening on Addr (tests).
	Listener net.Listener
	// Ready, when set, receives the graph's address once it serves.
	Ready chan<- string
}

// Serve compiles the graph and serves it until stop receives, then shuts
// down gracefully: readiness fails for DrainDelay, the listener closes, and
// requests in flight get ShutdownTimeout to finish.
func Serve(c ServerConfig, stop <-chan os.Signal, log *slog.Logger) error {
	c.applyGraphTimeouts()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewMetrics(reg)
	g, err := Compile(c.Spec, c.Options, m)
	if err != nil {
		return fmt.Errorf("the graph is invalid: %w", err)
	}
	if c.Options.Log == nil {
		c.Options.Log = log
	}
	h := NewHandler(g, c.Options, m)
	srv := NewServer(h, c.Limits, log)
	ln := c.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", c.Addr); err != nil {
			return err
		}
	}
	ln = LimitListener(ln, c.Limits)
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(ln) }()
	var metricsSrv *http.Server
	if c.MetricsAddr != "" && c.MetricsAddr != "0" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		if c.Pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		}
		metricsSrv = &http.Server{Addr: c.MetricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { errs <- metricsSrv.ListenAndServe() }()
	}
	log.Info("Serving the graph", "addr", ln.Addr().String(), "nodes", len(c.Spec.Nodes))
	if c.Ready != nil {
		c.Ready <- ln.Addr().String()
	}
	select {
	case err := <-errs:
		return err
	case <-stop:
	}
	log.Info("Shutting down: draining", "delay", c.DrainDelay.String())
	h.Drain()
	time.Sleep(c.DrainDelay)
	ctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(ctx)
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(ctx)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("requests still in flight after %s", c.ShutdownTimeout)
	}
	return err
}

// applyGraphTimeouts lets the graph's routerTimeouts override the flags.
func (c *ServerConfig) applyGraphTimeouts() {
	t := c.Spec.RouterTimeouts
	if t == nil {
		return
	}
	set := func(d *time.Duration, seconds *int64) {
		if seconds != nil {
			*d = time.Duration(*seconds) * time.Second
		}
	}
	set(&c.Limits.ReadTimeout, t.ServerRead)
	set(&c.Limits.WriteTimeout, t.ServerWrite)
	set(&c.Limits.IdleTimeout, t.ServerIdle)
	set(&c.Options.StepTimeout, t.ServiceClient)
}

// LimitListener bounds the connections ln accepts at once by
// l.MaxConnections (its default when 0); more wait in the listen queue.
func LimitListener(ln net.Listener, l ServerLimits) net.Listener {
	return netutil.LimitListener(ln, l.withDefaults().MaxConnections)
}

// NewServer returns the net/http server of h: HTTP/1.1, and HTTP/2 without
// TLS (h2c with prior knowledge, as gRPC clients speak it), each request
// bounded by l. net/http's own complaints (a TLS probe, a panic in a
// handler) go to log as warnings.
//
// HTTP/2 is served by golang.org/x/net/http2, the package net/http bundles,
// configured for one bound net/http cannot set on its bundled copy: an h2c
// connection with no request in flight closes after ReadHeaderTimeout, not
// IdleTimeout. net/http bounds an HTTP/1 request's headers by
// ReadHeaderTimeout, but hands an h2c connection to HTTP/2 with no header
// deadline, so a client that opened a header block and never ended it held
// the connection for the idle timeout (180 s).
func NewServer(h http.Handler, l ServerLimits, log *slog.Logger) *http.Server {
	l = l.withDefaults()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler: h, Protocols: &protocols,
		HTTP2:          &http.HTTP2Config{MaxConcurrentStreams: l.MaxConcurrentStreams},
		MaxHeaderBytes: l.MaxHeaderBytes, ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout: l.ReadTimeout, WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	h2 := &http2.Server{IdleTimeout: l.ReadHeaderTimeout, MaxConcurrentStreams: uint32(l.MaxConcurrentStreams)}
	if err := http2.ConfigureServer(srv, h2); err != nil {
		// Only a TLS configuration without HTTP/2's ciphers fails, and the
		// router serves no TLS.
		panic(err)
	}
	return srv
}
