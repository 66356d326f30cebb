package activator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Key names a component: the namespace and name of its workload Service.
type Key = types.NamespacedName

// Limits bound what the activator holds. The zero value of a field means
// its default.
type Limits struct {
	// MaxHeld is the most requests one component holds at once.
	MaxHeld int
	// MaxBodyBytes caps a held request's body (413 past it).
	MaxBodyBytes int64
	// MaxHeldBytes caps the bodies held across all components: the
	// activator's memory for held requests.
	MaxHeldBytes int64
	// HoldTimeout is how long a request is held before a 503.
	HoldTimeout time.Duration
	// ForwardTimeout is how long a forwarded request may take, once
	// released: with HoldTimeout, the longest a held request's response
	// may be written for (the server's write timeout is raised to it).
	ForwardTimeout time.Duration
	// RetryAfter is what a 503 tells the client to wait.
	RetryAfter time.Duration
}

// The defaults of Limits.
const (
	DefaultMaxHeld        = 1000
	DefaultMaxBodyBytes   = 8 << 20
	DefaultMaxHeldBytes   = 256 << 20
	DefaultHoldTimeout    = 2 * time.Minute
	DefaultForwardTimeout = time.Minute
	DefaultRetryAfter     = 5 * time.Second
)

func (l Limits) withDefaults() Limits {
	l.MaxHeld = orDefault(l.MaxHeld, DefaultMaxHeld)
	l.MaxBodyBytes = orDefault(l.MaxBodyBytes, DefaultMaxBodyBytes)
	l.MaxHeldBytes = orDefault(l.MaxHeldBytes, DefaultMaxHeldBytes)
	l.HoldTimeout = orDefault(l.HoldTimeout, DefaultHoldTimeout)
	l.ForwardTimeout = orDefault(l.ForwardTimeout, DefaultForwardTimeout)
	l.RetryAfter = orDefault(l.RetryAfter, DefaultRetryAfter)
	return l
}

// orDefault is v, or d when v is not above zero.
func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// Activator is an http.Handler that forwards a component's requests to a
// ready replica, and holds them while it has none.
type Activator struct {
	limits  Limits
	resolve func(*http.Request) (Key, bool)
	proxy   *httputil.ReverseProxy
	metrics *Metrics
	now     func() time.Time

	mu        sync.Mutex
	comps     map[Key]*component
	heldBytes int64
	closed    bool
	// watchers are told of every change of a component's demand.
	watchers map[chan Key]struct{}
}

// component is one component's state.
type component struct {
	// backend is the address (host:port) of a ready replica; "" when none
	// is.
	backend string
	// failure says why a cold start failed; held requests then get 503s
	// that name it.
	failure string
	held    []*waiter
	// inflight are the requests being forwarded.
	inflight int
	// coldSince is when the first request of a cold start was held.
	coldSince time.Time
}

// waiter is one held request.
type waiter struct {
	// done receives the backend once, or "" with failure set, when the
	// request is released.
	done    chan release
	bytes   int64
	arrived time.Time
}

// release is a waiter's outcome: the backend to forward to, or why not.
// A request released with others is sent after the one before it was
// written (after closes then), so that they reach the replica in arrival
// order; sent closes once this one is.
type release struct {
	backend, failure string
	after            <-chan struct{}
	sent             chan struct{}
}

// New returns an activator. resolve names the component a request is for
// (false: none, a 404); transport carries the forwarded requests (nil:
// http.DefaultTransport); m may be nil.
func New(l Limits, resolve func(*http.Request) (Key, bool), transport http.RoundTripper, m *Metrics) *Activator {
	if transport == nil {
		transport = http.DefaultTransport
	}
	a := &Activator{limits: l.withDefaults(), resolve: resolve, metrics: m, now: time.Now,
		comps: map[Key]*component{}, watchers: map[chan Key]struct{}{}}
	a.proxy = &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetXForwarded()
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", backendOf(pr.In.Context())
			pr.Out.Host = pr.In.Host
			// Never sent twice: net/http replays a request whose body it
			// can get again after a connection it reused fails.
			pr.Out.GetBody = nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			key, _ := a.resolve(r)
			a.fail(w, key, http.StatusBadGateway, "the replica failed the request: "+err.Error(), false)
		},
	}
	return a
}

type backendKey struct{}

func backendOf(ctx context.Context) string { s, _ := ctx.Value(backendKey{}).(string); return s }

// ServeHTTP forwards the request, or holds it until a replica is ready.
func (a *Activator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, ok := a.resolve(r)
	if !ok {
		writeError(w, http.StatusNotFound, "", "no component serves the host "+strconv.Quote(r.Host), 0)
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		a.fail(w, key, http.StatusServiceUnavailable, "the activator is shutting down", true)
		return
	}
	c := a.component(key)
	if c.backend != "" {
		backend := c.backend
		c.inflight++
		a.mu.Unlock()
		a.forward(w, r, key, backend, nil, nil, nil)
		return
	}
	failure, full := c.failure, len(c.held) >= a.limits.MaxHeld
	a.mu.Unlock()
	switch {
	case failure != "":
		a.fail(w, key, http.StatusServiceUnavailable, "the component cannot start: "+failure, true)
		return
	case full:
		a.metrics.rejected(key, "queue-full")
		a.fail(w, key, http.StatusServiceUnavailable, fmt.Sprintf("the component is starting and holds %d requests already", a.limits.MaxHeld), true)
		return
	}
	body, err := a.readBody(r)
	if err != nil {
		a.metrics.rejected(key, "body-too-large")
		a.fail(w, key, http.StatusRequestEntityTooLarge, err.Error(), false)
		return
	}
	wt, msg := a.hold(key, int64(len(body)))
	if wt != nil {
		// The server's write timeout counts from the request's headers; a
		// held request's answer may come that much later.
		_ = http.NewResponseController(w).SetWriteDeadline(a.now().Add(a.limits.HoldTimeout + a.limits.ForwardTimeout))
	}
	if wt == nil {
		a.metrics.rejected(key, "busy")
		a.fail(w, key, http.StatusServiceUnavailable, msg, true)
		return
	}
	a.wait(w, r, key, wt, body)
}

// readBody reads a request's body, up to MaxBodyBytes.
func (a *Activator) readBody(r *http.Request) ([]byte, error) {
	limit := a.limits.MaxBodyBytes
	tooLarge := fmt.Errorf("the request body is over the %d bytes a held request may have", limit)
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the request body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, tooLarge
	}
	return body, nil
}

// hold queues a request of n body bytes, unless the component started
// meanwhile (then the waiter is released at once) or a bound is reached
// (then it returns nil and why).
func (a *Activator) hold(key Key, n int64) (*waiter, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, "the activator is shutting down"
	}
	if a.heldBytes+n > a.limits.MaxHeldBytes {
		return nil, "the activator holds as many request bodies as it may"
	}
	c := a.component(key)
	if len(c.held) >= a.limits.MaxHeld {
		return nil, fmt.Sprintf("the component is starting and holds %d requests already", a.limits.MaxHeld)
	}
	wt := &waiter{done: make(chan release, 1), bytes: n, arrived: a.now()}
	a.heldBytes += n
	if c.backend != "" || c.failure != "" {
		wt.done <- release{backend: c.backend, failure: c.failure}
		if c.backend != "" {
			c.inflight++
		}
		return wt, ""
	}
	if len(c.held) == 0 {
		c.coldSince = wt.arrived
	}
	c.held = append(c.held, wt)
	a.metrics.setHeld(key, len(c.held))
	a.notify(key)
	return wt, ""
}

// wait waits for the held request's release, then forwards it or answers.
func (a *Activator) wait(w http.ResponseWriter, r *http.Request, key Key, wt *waiter, body []byte) {
	timer := time.NewTimer(a.limits.HoldTimeout)
	defer timer.Stop()
	var rel release
	select {
	case rel = <-wt.done:
	case <-timer.C:
		if !a.unhold(key, wt) {
			rel = <-wt.done // released as the timer fired
			break
		}
		a.metrics.timedOut(key)
		a.fail(w, key, http.StatusServiceUnavailable, fmt.Sprintf("no replica became ready within %s", a.limits.HoldTimeout), true)
		return
	case <-r.Context().Done():
		if !a.unhold(key, wt) {
			rel = <-wt.done
			break
		}
		return // the client went away; nothing is sent
	}
	if rel.backend == "" {
		a.releaseBytes(wt.bytes)
		a.fail(w, key, http.StatusServiceUnavailable, "the component cannot start: "+rel.failure, true)
		return
	}
	var once sync.Once
	sent := func() {
		if rel.sent != nil {
			once.Do(func() { close(rel.sent) })
		}
	}
	defer sent()
	if rel.after != nil {
		<-rel.after // the request held before this one is on its way
	}
	a.forward(w, r, key, rel.backend, body, wt, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent() }})
}

// unhold takes a waiter off its component's queue; false when it was
// released already.
func (a *Activator) unhold(key Key, wt *waiter) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.comps[key]
	if c == nil {
		return false
	}
	for i, h := range c.held {
		if h == wt {
			c.held = append(c.held[:i], c.held[i+1:]...)
			a.heldBytes -= wt.bytes
			a.metrics.setHeld(key, len(c.held))
			a.notify(key)
			return true
		}
	}
	return false
}

func (a *Activator) releaseBytes(n int64) {
	a.mu.Lock()
	a.heldBytes -= n
	a.mu.Unlock()
}

// forward sends the request to backend once; body, when held, replaces
// the request's. The component's in-flight count was raised for it.
func (a *Activator) forward(w http.ResponseWriter, r *http.Request, key Key, backend string, body []byte, wt *waiter, trace *httptrace.ClientTrace) {
	defer func() {
		a.mu.Lock()
		if c := a.comps[key]; c != nil {
			c.inflight--
		}
		if wt != nil {
			a.heldBytes -= wt.bytes
		}
		a.notify(key)
		a.mu.Unlock()
	}()
	ctx := context.WithValue(r.Context(), backendKey{}, backend)
	if trace != nil {
		ctx = httptrace.WithClientTrace(ctx, trace)
	}
	out := r.WithContext(ctx)
	if wt != nil {
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		a.metrics.forwarded(key, a.now().Sub(wt.arrived))
	}
	a.proxy.ServeHTTP(w, out)
}

// SetBackend records that a replica of the component is ready at backend
// (host:port), or that none is (""). Held requests are released in
// arrival order.
func (a *Activator) SetBackend(key Key, backend string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.component(key)
	c.backend = backend
	if backend == "" {
		return
	}
	c.failure = ""
	if len(c.held) > 0 {
		a.metrics.coldStart(key, a.now().Sub(c.coldSince))
	}
	var after <-chan struct{}
	for _, wt := range c.held {
		c.inflight++
		sent := make(chan struct{})
		wt.done <- release{backend: backend, after: after, sent: sent}
		after = sent
	}
	c.held, c.coldSince = nil, time.Time{}
	a.metrics.setHeld(key, 0)
	a.notify(key)
}

// SetFailure records why the component's cold start failed (an image that
// does not pull, a container that crashes): the held requests, and those
// that come while it lasts, are answered 503 naming it. "" clears it.
func (a *Activator) SetFailure(key Key, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.component(key)
	c.failure = reason
	if reason == "" {
		return
	}
	for _, wt := range c.held {
		wt.done <- release{failure: reason}
	}
	c.held, c.coldSince = nil, time.Time{}
	a.metrics.setHeld(key, 0)
	a.notify(key)
}

// Demand is what the component asks of KEDA: its held and in-flight
// requests.
func (a *Activator) Demand(key Key) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.comps[key]
	if c == nil {
		return 0
	}
	return len(c.held) + c.inflight
}

// Watch returns a channel that receives a component's key whenever its
// demand may have changed, until stop is called. A slow reader misses
// changes, never blocks the activator: it reads Demand again.
func (a *Activator) Watch() (changes <-chan Key, stop func()) {
	ch := make(chan Key, 64)
	a.mu.Lock()
	a.watchers[ch] = struct{}{}
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		delete(a.watchers, ch)
		a.mu.Unlock()
	}
}

// notify tells the watchers of a change; a.mu is held.
func (a *Activator) notify(key Key) {
	for ch := range a.watchers {
		select {
		case ch <- key:
		default:
		}
	}
}

// Shutdown stops holding: the held requests, and any that come, are
// answered 503 with Retry-After; those being forwarded finish.
func (a *Activator) Shutdown() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for key, c := range a.comps {
		for _, wt := range c.held {
			wt.done <- release{failure: "the activator is shutting down"}
		}
		c.held = nil
		a.metrics.setHeld(key, 0)
	}
}

// component returns key's state, made on first use; a.mu is held.
func (a *Activator) component(key Key) *component {
	c := a.comps[key]
	if c == nil {
		c = &component{}
		a.comps[key] = c
	}
	return c
}

// fail answers with status and a JSON body naming the component.
func (a *Activator) fail(w http.ResponseWriter, key Key, status int, msg string, retry bool) {
	after := 0
	if retry {
		after = int(a.limits.RetryAfter.Round(time.Second) / time.Second)
	}
	writeError(w, status, key.String(), msg, after)
}

// writeError writes {"error": msg, "component": component}.
func writeError(w http.ResponseWriter, status int, component, msg string, retryAfter int) {
	w.Header().Set("Content-Type", "application/json")
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(status)
	body := map[string]string{"error": msg}
	if component != "" {
		body["component"] = component
	}
	_, _ = w.Write(jsonOf(body))
}

// jsonOf encodes a string map; it cannot fail.
func jsonOf(m map[string]string) []byte {
	data, _ := json.Marshal(m)
	return data
}
