package console

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Serving bounds: a console serves people, a few requests each.
const (
	maxConnections    = 256
	maxHeaderBytes    = 64 << 10
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 5 * time.Second
)

// Serve serves the console on ln until ctx ends. It sets no write timeout:
// the live streams are long-lived, and each is bounded by itself.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	srv := &http.Server{
		Handler:           s,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(netutil.LimitListener(ln, maxConnections)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	// The live streams end with the base context; Shutdown waits for the
	// rest.
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if e := <-done; !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	return err
}
