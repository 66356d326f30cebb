package testenv

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// WriteLog records a client's write requests (Events apart) as
// "METHOD path": set Wrap as the manager's rest.Config WrapTransport.
type WriteLog struct {
	mu    sync.Mutex
	paths []string
}

// Wrap records the writes that pass through next.
func (l *WriteLog) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && !strings.Contains(req.URL.Path, "/events") {
			l.mu.Lock()
			l.paths = append(l.paths, req.Method+" "+req.URL.Path)
			l.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// Into returns the writes into namespace ns so far.
func (l *WriteLog) Into(ns string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.paths {
		if strings.Contains(p, "/namespaces/"+ns+"/") {
			out = append(out, p)
		}
	}
	return out
}

// Settled waits until no write into ns happened for quiet, or fails after
// limit; it reports whether the writes settled.
func (l *WriteLog) Settled(ns string, quiet, limit time.Duration) bool {
	last, since := len(l.Into(ns)), time.Now()
	deadline := time.Now().Add(limit)
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
		if n := len(l.Into(ns)); n != last {
			last, since = n, time.Now()
		}
	}
	return true
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
