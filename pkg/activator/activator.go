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

	"github.com/serval-dev/serval/pkg/router"
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
	// MaxHeldBytes caps the bodies held across all components, counted
	// as they are read (before each buffer is made): the activator's
	// memory for held requests.
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

// memoryHeadroom is what the activator's process needs beside the bodies
// it holds: its caches of Services and EndpointSlices, connections and
// goroutines.
const memoryHeadroom = 64 << 20

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit) the
// activator runs under: MaxHeldBytes and a headroom. The bodies' buffers
// are bounded by MaxHeldBytes as they are taken, but a buffer given back
// is garbage until the collector runs, which by default lets the heap
// grow to twice what is live; under this limit it collects sooner, so
// that the process stays near its bound (GOMEMLIMIT, when set, wins).
func MemoryLimit(l Limits) int64 {
	return l.withDefaults().MaxHeldBytes + memoryHeadroom
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

	// bodies is MaxHeldBytes: every held body's buffers are taken from
	// it before they are made, and given back when the request ends.
	bodies *router.BodyBudget

	mu     sync.Mutex
	comps  map[Key]*component
	closed bool
	// watchers are told of every change of a component's demand, by
	// component.
	watchers map[Key]map[chan struct{}]struct{}
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
	// gone: forgotten (Forget) while requests were in flight; the entry
	// goes with the last of them.
	gone bool
}

// waiter is one held request.
type waiter struct {
	// done receives the backend once, or "" with failure set, when the
	// request is released.
	done    chan release
	arrived time.Time
}

// release is a waiter's outcome: the backend to forward to, or the
// message of the 503 it gets instead.
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
	l = l.withDefaults()
	a := &Activator{limits: l, resolve: resolve, metrics: m, now: time.Now,
		comps: map[Key]*component{}, watchers: map[Key]map[chan struct{}]struct{}{},
		bodies: router.NewBodyBudget(l.MaxHeldBytes, fmt.Sprintf(
			"the activator holds its limit of %d bytes of request bodies (maxHeldBytes); try again shortly", l.MaxHeldBytes))}
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
	// Refused before its body is read, if it would be after.
	msg, reason := a.refusal(c)
	a.mu.Unlock()
	if msg != "" {
		a.refuse(w, key, msg, reason)
		return
	}
	body, release, err := a.bodies.ReadBody(r, a.limits.MaxBodyBytes)
	if err != nil {
		failure := router.BodyFailure(err, a.limits.MaxBodyBytes)
		a.metrics.rejected(key, bodyFailureReason(failure.Status))
		a.fail(w, key, failure.Status, failure.Message, failure.RetryAfter > 0)
		return
	}
	defer release()
	wt, msg, reason := a.hold(key)
	if wt == nil {
		a.refuse(w, key, msg, reason)
		return
	}
	// The server's write timeout counts from the request's headers; a held
	// request's answer may come that much later.
	_ = http.NewResponseController(w).SetWriteDeadline(a.now().Add(a.limits.HoldTimeout + a.limits.ForwardTimeout))
	a.wait(w, r, key, wt, body)
}

// refusal says why the component takes no request now, with the reason
// the metrics count it under ("" for a failed cold start, which is not a
// bound); "" when it takes them. a.mu is held.
func (a *Activator) refusal(c *component) (msg, reason string) {
	switch {
	case c.failure != "":
		return "the component cannot start: " + c.failure, ""
	case len(c.held) >= a.limits.MaxHeld:
		return fmt.Sprintf("the component is starting and holds %d requests already", a.limits.MaxHeld), "queue-full"
	}
	return "", ""
}

// refuse answers a request the activator does not hold: 503, Retry-After.
func (a *Activator) refuse(w http.ResponseWriter, key Key, msg, reason string) {
	if reason != "" {
		a.metrics.rejected(key, reason)
	}
	a.fail(w, key, http.StatusServiceUnavailable, msg, true)
}

// bodyFailureReason is the metrics' reason for a body that could not be
// read, by the status it is answered with.
func bodyFailureReason(status int) string {
	switch status {
	case http.StatusServiceUnavailable:
		return "busy"
	case http.StatusRequestEntityTooLarge:
		return "body-too-large"
	case http.StatusRequestTimeout:
		return "body-timeout"
	}
	return "body-unreadable"
}

// hold queues a request whose body was read, unless the component
// started meanwhile (then the waiter is released at once) or it is refused
// (then it returns nil, why, and the metrics' reason).
func (a *Activator) hold(key Key) (wt *waiter, msg, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, "the activator is shutting down", ""
	}
	c := a.component(key)
	wt = &waiter{done: make(chan release, 1), arrived: a.now()}
	if c.backend != "" {
		c.inflight++
		wt.done <- release{backend: c.backend}
		return wt, "", ""
	}
	if msg, reason := a.refusal(c); msg != "" {
		return nil, msg, reason
	}
	if len(c.held) == 0 {
		c.coldSince = wt.arrived
	}
	c.held = append(c.held, wt)
	a.metrics.setHeld(key, len(c.held))
	a.notify(key)
	return wt, "", ""
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
		a.fail(w, key, http.StatusServiceUnavailable, rel.failure, true)
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
			a.metrics.setHeld(key, len(c.held))
			a.notify(key)
			return true
		}
	}
	return false
}

// forward sends the request to backend once; body, when held, replaces
// the request's. The component's in-flight count was raised for it.
func (a *Activator) forward(w http.ResponseWriter, r *http.Request, key Key, backend string, body []byte, wt *waiter, trace *httptrace.ClientTrace) {
	defer func() {
		a.mu.Lock()
		if c := a.comps[key]; c != nil {
			c.inflight--
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
	c.backend, c.gone = backend, false
	if backend == "" {
		return
	}
	c.failure = ""
	if len(c.held) > 0 {
		a.metrics.coldStart(key, a.now().Sub(c.coldSince))
	}
	var after <-chan struct{}
	a.releaseHeld(key, c, func() release {
		c.inflight++
		sent := make(chan struct{})
		r := release{backend: backend, after: after, sent: sent}
		after = sent
		return r
	})
}

// SetFailure records why the component's cold start failed (an image that
// does not pull, a container that crashes): the held requests, and those
// that come while it lasts, are answered 503 naming it. "" clears it.
func (a *Activator) SetFailure(key Key, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.component(key)
	c.failure, c.gone = reason, false
	if reason != "" {
		a.releaseHeld(key, c, func() release { return release{failure: "the component cannot start: " + reason} })
	}
}

// Forget drops a component whose Service is gone or no longer scales from
// zero: what it holds is answered 503, and its state goes once nothing of
// it is in flight, so that the activator keeps no state of a component
// that is not there.
func (a *Activator) Forget(key Key) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.comps[key]
	if c == nil {
		return
	}
	c.backend = ""
	a.releaseHeld(key, c, func() release {
		return release{failure: "the component's Service is gone or no longer scales from zero"}
	})
	if c.inflight == 0 {
		delete(a.comps, key)
	} else {
		c.gone = true
	}
}

// releaseHeld releases the component's held requests in arrival order,
// each with what next gives it; a.mu is held.
func (a *Activator) releaseHeld(key Key, c *component, next func() release) {
	if len(c.held) == 0 {
		return
	}
	for _, wt := range c.held {
		wt.done <- next()
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

// Watch returns a channel that receives whenever the component's demand
// may have changed, until stop is called. Changes coalesce while the
// reader is busy (it reads Demand again), and none is lost: a change
// after the last receive always leaves one pending.
func (a *Activator) Watch(key Key) (changes <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	a.mu.Lock()
	if a.watchers[key] == nil {
		a.watchers[key] = map[chan struct{}]struct{}{}
	}
	a.watchers[key][ch] = struct{}{}
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		delete(a.watchers[key], ch)
		if len(a.watchers[key]) == 0 {
			delete(a.watchers, key)
		}
		a.mu.Unlock()
	}
}

// notify tells the component's watchers of a change; a.mu is held.
func (a *Activator) notify(key Key) {
	for ch := range a.watchers[key] {
		select {
		case ch <- struct{}{}:
		default: // one is pending already
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
		a.releaseHeld(key, c, func() release { return release{failure: "the activator is shutting down"} })
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
