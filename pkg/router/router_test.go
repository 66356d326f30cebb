package router_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/router"
)

// backend is a test model server: it answers with a fixed status and body,
// and records what it received.
type backend struct {
	*httptest.Server
	status  int
	body    string
	delay   time.Duration
	calls   atomic.Int32
	lastReq atomic.Value // []byte
	lastHdr atomic.Value // http.Header
}

func newBackend(t *testing.T, status int, body string) *backend {
	t.Helper()
	b := &backend{status: status, body: body}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		b.calls.Add(1)
		b.lastReq.Store(data)
		b.lastHdr.Store(r.Header.Clone())
		if b.delay > 0 {
			select {
			case <-time.After(b.delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(b.status)
		_, _ = io.WriteString(w, b.body)
	}))
	t.Cleanup(b.Close)
	return b
}

// echo answers with the request it got, wrapped: {"<name>":<request>}.
func newEcho(t *testing.T, name string) *backend {
	t.Helper()
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		b.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{%q:%s}`, name, data)
	}))
	t.Cleanup(b.Close)
	return b
}

func graph(nodes map[string]v1alpha1.InferenceRouter) *v1alpha1.InferenceGraphSpec {
	return &v1alpha1.InferenceGraphSpec{Nodes: nodes}
}

func url(u string) v1alpha1.InferenceStep {
	return v1alpha1.InferenceStep{InferenceTarget: v1alpha1.InferenceTarget{ServiceURL: u}}
}

func named(name string, s v1alpha1.InferenceStep) v1alpha1.InferenceStep {
	s.StepName = name
	return s
}

func nodeStep(n string) v1alpha1.InferenceStep {
	return v1alpha1.InferenceStep{InferenceTarget: v1alpha1.InferenceTarget{NodeName: n}}
}

func with(s v1alpha1.InferenceStep, f func(*v1alpha1.InferenceStep)) v1alpha1.InferenceStep {
	f(&s)
	return s
}

func hard(s *v1alpha1.InferenceStep)     { s.Dependency = v1alpha1.Hard }
func response(s *v1alpha1.InferenceStep) { s.Data = v1alpha1.DataResponse }

func serve(t *testing.T, spec *v1alpha1.InferenceGraphSpec, o router.Options) (*server, *router.Metrics) {
	t.Helper()
	m := router.NewMetrics(prometheus.NewRegistry())
	g, err := router.Compile(spec, o, m)
	require.NoError(t, err)
	return start(t, router.NewHandler(g, o, m)), m
}

// server is a router server on a loopback port.
type server struct{ URL string }

// start serves h with the router's own server, as cmd/router does.
func start(t testing.TB, h *router.Handler) *server {
	t.Helper()
	return &server{URL: "http://" + listen(t, h, router.ServerLimits{})}
}

// listen serves h with the router's own server and limits on a loopback
// port, and returns its address.
func listen(t testing.TB, h *router.Handler, l router.ServerLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := router.NewServer(h, l, discard)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func post(t *testing.T, u, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

func TestSequence(t *testing.T) {
	a, b := newEcho(t, "a"), newEcho(t, "b")
	failing := newBackend(t, 500, `{"error":"model crashed"}`)
	tests := []struct {
		name       string
		steps      []v1alpha1.InferenceStep
		wantStatus int
		wantBody   string
	}{
		{"$response feeds the next step", []v1alpha1.InferenceStep{url(a.URL), with(url(b.URL), response)},
			200, `{"b":{"a":{"x":1}}}`},
		{"$request (the default) sends the request again", []v1alpha1.InferenceStep{url(a.URL), url(b.URL)},
			200, `{"b":{"x":1}}`},
		{"a Soft step that fails does not stop the sequence", []v1alpha1.InferenceStep{url(failing.URL), with(url(b.URL), response)},
			200, `{"b":{"error":"model crashed"}}`},
		{"a Hard step that fails stops it with its response", []v1alpha1.InferenceStep{with(url(failing.URL), hard), url(b.URL)},
			500, `{"error":"model crashed"}`},
		{"a condition that does not match ends the sequence with what it has",
			[]v1alpha1.InferenceStep{url(a.URL), with(url(b.URL), func(s *v1alpha1.InferenceStep) { s.Condition = "a.y" })},
			200, `{"a":{"x":1}}`},
		{"a condition that matches runs the step",
			[]v1alpha1.InferenceStep{url(a.URL), with(url(b.URL), func(s *v1alpha1.InferenceStep) { s.Condition = "a.x"; s.Data = v1alpha1.DataResponse })},
			200, `{"b":{"a":{"x":1}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: tt.steps}}), router.Options{})
			status, body := post(t, srv.URL, `{"x":1}`)
			assert.Equal(t, tt.wantStatus, status)
			assert.JSONEq(t, tt.wantBody, body)
		})
	}
}

func TestSwitch(t *testing.T) {
	a, b := newEcho(t, "a"), newEcho(t, "b")
	spec := graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Switch, Steps: []v1alpha1.InferenceStep{
		with(url(a.URL), func(s *v1alpha1.InferenceStep) { s.Condition = `instances.#(kind=="cat")` }),
		with(url(b.URL), func(s *v1alpha1.InferenceStep) { s.Condition = `instances.#(kind=="dog")` }),
	}}})
	srv, _ := serve(t, spec, router.Options{})
	tests := []struct {
		name, request string
		wantStatus    int
		wantBody      string
	}{
		{"the first matching step", `{"instances":[{"kind":"cat"}]}`, 200, `{"a":{"instances":[{"kind":"cat"}]}}`},
		{"the second", `{"instances":[{"kind":"dog"}]}`, 200, `{"b":{"instances":[{"kind":"dog"}]}}`},
		{"none matches", `{"instances":[{"kind":"cow"}]}`, 404,
			`{"error":"node root: no step's condition matches the request","node":"root"}`},
		{"not JSON", `instances=cat`, 400,
			`{"error":"node root: the request is not JSON, so no condition of the Switch can match it","node":"root"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL, tt.request)
			assert.Equal(t, tt.wantStatus, status)
			assert.JSONEq(t, tt.wantBody, body)
		})
	}
}

func TestEnsemble(t *testing.T) {
	a, b := newEcho(t, "a"), newEcho(t, "b")
	failing := newBackend(t, 503, `{"error":"overloaded"}`)
	notJSON := newBackend(t, 200, `plain text`)
	tests := []struct {
		name       string
		steps      []v1alpha1.InferenceStep
		wantStatus int
		wantBody   string
	}{
		{"responses merged by step name, index when unnamed",
			[]v1alpha1.InferenceStep{named("first", url(a.URL)), url(b.URL)}, 200, `{"first":{"a":{"x":1}},"1":{"b":{"x":1}}}`},
		{"a Soft step's failure is its entry",
			[]v1alpha1.InferenceStep{named("a", url(a.URL)), named("f", url(failing.URL))}, 200, `{"a":{"a":{"x":1}},"f":{"error":"overloaded"}}`},
		{"a Hard step's failure fails the node",
			[]v1alpha1.InferenceStep{named("a", url(a.URL)), named("f", with(url(failing.URL), hard))}, 503, `{"error":"overloaded"}`},
		{"a body that is not JSON is an error entry",
			[]v1alpha1.InferenceStep{named("t", url(notJSON.URL))}, 200,
			`{"t":{"error":"node root: step t: the step answered with a body that is not JSON","node":"root","step":"t"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble, Steps: tt.steps}}), router.Options{})
			status, body := post(t, srv.URL, `{"x":1}`)
			assert.Equal(t, tt.wantStatus, status)
			assert.JSONEq(t, tt.wantBody, body)
		})
	}
}

func TestEnsembleCallsStepsAtOnce(t *testing.T) {
	slow1, slow2 := newBackend(t, 200, `{"n":1}`), newBackend(t, 200, `{"n":2}`)
	slow1.delay, slow2.delay = 300*time.Millisecond, 300*time.Millisecond
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble,
		Steps: []v1alpha1.InferenceStep{url(slow1.URL), url(slow2.URL)}}}), router.Options{})
	start := time.Now()
	status, body := post(t, srv.URL, `{}`)
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{"0":{"n":1},"1":{"n":2}}`, body)
	assert.Less(t, time.Since(start), 550*time.Millisecond, "two 300 ms steps in parallel take about 300 ms, not 600")
}

func weight(w int64) func(*v1alpha1.InferenceStep) {
	return func(s *v1alpha1.InferenceStep) { s.Weight = &w }
}

func TestSplitter(t *testing.T) {
	a, b := newEcho(t, "a"), newEcho(t, "b")
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{
		with(url(a.URL), weight(80)), with(url(b.URL), weight(20)),
	}}}), router.Options{})
	for range 500 {
		status, _ := post(t, srv.URL, `{}`)
		require.Equal(t, 200, status)
	}
	// 80% of 500 is 400; the standard deviation is about 9.
	assert.InDelta(t, 400, a.calls.Load(), 50)
	assert.Equal(t, int32(500), a.calls.Load()+b.calls.Load())
}

func TestNestedNodes(t *testing.T) {
	a, b, c := newEcho(t, "a"), newEcho(t, "b"), newEcho(t, "c")
	spec := graph(map[string]v1alpha1.InferenceRouter{
		"root":     {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{nodeStep("ensemble"), with(url(c.URL), response)}},
		"ensemble": {RouterType: v1alpha1.Ensemble, Steps: []v1alpha1.InferenceStep{named("a", url(a.URL)), named("b", url(b.URL))}},
	})
	srv, _ := serve(t, spec, router.Options{})
	status, body := post(t, srv.URL, `{"x":1}`)
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{"c":{"a":{"a":{"x":1}},"b":{"b":{"x":1}}}}`, body)
}

func TestHeaderPropagation(t *testing.T) {
	b := newBackend(t, 200, `{}`)
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{PropagateHeaders: []string{"authorization", "X-Trace-*"}})
	status, _ := post(t, srv.URL, `{}`, "Authorization", "Bearer t", "X-Trace-Id", "abc", "X-Trace-Span", "1", "Cookie", "secret")
	require.Equal(t, 200, status)
	hdr := b.lastHdr.Load().(http.Header)
	assert.Equal(t, "Bearer t", hdr.Get("Authorization"))
	assert.Equal(t, "abc", hdr.Get("X-Trace-Id"))
	assert.Equal(t, "1", hdr.Get("X-Trace-Span"))
	assert.Empty(t, hdr.Get("Cookie"), "headers not listed are not passed on")
	assert.Equal(t, "application/json", hdr.Get("Content-Type"))
}

func TestTimeoutsAndFailures(t *testing.T) {
	slow := newBackend(t, 200, `{}`)
	slow.delay = 2 * time.Second
	closed := newBackend(t, 200, `{}`)
	closedURL := closed.URL
	closed.Close()
	seconds := int64(1)
	tests := []struct {
		name       string
		spec       *v1alpha1.InferenceGraphSpec
		o          router.Options
		wantStatus int
		wantError  string
	}{
		{"a step that does not answer within the step timeout",
			graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{named("slow", with(url(slow.URL), hard))}}}),
			router.Options{StepTimeout: 200 * time.Millisecond}, 504, "node root: step slow: the step did not answer in time"},
		{"a graph that does not answer within its timeout",
			&v1alpha1.InferenceGraphSpec{TimeoutSeconds: &seconds, Nodes: map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
				Steps: []v1alpha1.InferenceStep{named("slow", with(url(slow.URL), hard))}}}},
			router.Options{}, 504, "node root: step slow: the step did not answer in time"},
		{"a step that refuses connections",
			graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{named("gone", with(url(closedURL), hard))}}}),
			router.Options{}, 502, "node root: step gone: the step could not be reached"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.spec, tt.o)
			start := time.Now()
			status, body := post(t, srv.URL, `{}`)
			assert.Equal(t, tt.wantStatus, status)
			var e struct{ Error, Node, Step string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Equal(t, tt.wantError, e.Error)
			assert.NotContains(t, body, "127.0.0.1", "the client never learns a step's address")
			assert.Equal(t, "root", e.Node)
			assert.NotEmpty(t, e.Step)
			assert.Less(t, time.Since(start), 1900*time.Millisecond)
		})
	}
}

// TestLargeStreamingBodies sends 16 MiB through a node that streams, with a
// known length and chunked, and back.
func TestLargeStreamingBodies(t *testing.T) {
	var got atomic.Value
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		data, _ := io.ReadAll(io.TeeReader(r.Body, h))
		got.Store(h.Sum(nil))
		_, _ = w.Write(data) // a large response, sent chunked
	}))
	t.Cleanup(echo.Close)
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(echo.URL)}}}), router.Options{})
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<20)
	want := sha256.Sum256(payload)
	for _, chunked := range []bool{false, true} {
		var body io.Reader = bytes.NewReader(payload)
		if chunked {
			body = io.MultiReader(body) // hides the length: sent chunked
		}
		resp, err := http.Post(srv.URL, "application/octet-stream", body)
		require.NoError(t, err)
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, want[:], got.Load().([]byte), "the backend got the whole body (chunked=%v)", chunked)
		assert.Equal(t, want, sha256.Sum256(data), "the client got the whole response (chunked=%v)", chunked)
	}
}

// TestConnectionReuse checks that calls reuse connections to a step, and
// that a connection the backend closed while idle is replaced.
func TestConnectionReuse(t *testing.T) {
	var conns, closed atomic.Int32
	b := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{}`))
	}))
	b.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed:
			closed.Add(1)
		}
	}
	b.Start()
	t.Cleanup(b.Close)
	spec := graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL), url(b.URL)}}})
	srv, _ := serve(t, spec, router.Options{})
	for range 50 {
		status, _ := post(t, srv.URL, `{}`)
		require.Equal(t, 200, status)
	}
	assert.Equal(t, int32(1), conns.Load(), "100 sequential calls over one kept-alive connection")
	b.CloseClientConnections()
	require.Eventually(t, func() bool { return closed.Load() == 1 }, 5*time.Second, time.Millisecond, "the backend closed the idle connection")
	status, body := post(t, srv.URL, `{}`)
	assert.Equal(t, 200, status, body)
}

func TestReadinessAndDrain(t *testing.T) {
	g, err := router.Compile(graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url("http://127.0.0.1:1")}}}), router.Options{}, nil)
	require.NoError(t, err)
	h := router.NewHandler(g, router.Options{}, nil)
	srv := start(t, h)
	get := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, get("/readyz"))
	h.Drain()
	assert.Equal(t, 503, get("/readyz"))
	assert.Equal(t, 200, get("/livez"))
}

func TestH2C(t *testing.T) {
	b := newEcho(t, "a")
	m := router.NewMetrics(prometheus.NewRegistry())
	g, err := router.Compile(graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{}, m)
	require.NoError(t, err)
	srv := start(t, router.NewHandler(g, router.Options{}, m))
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &p}}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"x":1}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 2, resp.ProtoMajor, "spoken over HTTP/2 without TLS")
	assert.JSONEq(t, `{"a":{"x":1}}`, string(data))
}

func TestMetrics(t *testing.T) {
	ok, failing := newBackend(t, 200, `{}`), newBackend(t, 500, `{}`)
	spec := graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble,
		Steps: []v1alpha1.InferenceStep{named("ok", url(ok.URL)), named("bad", url(failing.URL))}}})
	reg := prometheus.NewRegistry()
	m := router.NewMetrics(reg)
	g, err := router.Compile(spec, router.Options{}, m)
	require.NoError(t, err)
	srv := start(t, router.NewHandler(g, router.Options{}, m))
	for range 3 {
		post(t, srv.URL, `{}`)
	}
	want := `
# HELP serval_router_step_requests_total Calls to each step, by outcome: ok (2xx), failed (other status), error (no answer).
# TYPE serval_router_step_requests_total counter
serval_router_step_requests_total{node="root",outcome="error",step="bad"} 0
serval_router_step_requests_total{node="root",outcome="error",step="ok"} 0
serval_router_step_requests_total{node="root",outcome="failed",step="bad"} 3
serval_router_step_requests_total{node="root",outcome="failed",step="ok"} 0
serval_router_step_requests_total{node="root",outcome="ok",step="bad"} 0
serval_router_step_requests_total{node="root",outcome="ok",step="ok"} 3
`
	want += `
# HELP serval_router_requests_total Requests through the graph, by status class (2xx, 4xx, 5xx).
# TYPE serval_router_requests_total counter
serval_router_requests_total{code="1xx"} 0
serval_router_requests_total{code="2xx"} 3
serval_router_requests_total{code="3xx"} 0
serval_router_requests_total{code="4xx"} 0
serval_router_requests_total{code="5xx"} 0
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "serval_router_step_requests_total", "serval_router_requests_total"))
}

// TestNoContent: a step that answers 204 is answered at once, without a
// body.
func TestNoContent(t *testing.T) {
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(b.Close)
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{StepTimeout: 2 * time.Second})
	status, body := post(t, srv.URL, `{}`)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Empty(t, body)
}

// TestGracefulShutdown: on the stop signal, readiness fails, and a request
// in flight is still answered before Serve returns.
func TestGracefulShutdown(t *testing.T) {
	slow := newBackend(t, 200, `{"done":true}`)
	slow.delay = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	stop := make(chan os.Signal, 1)
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- router.Serve(router.ServerConfig{Spec: graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
			Steps: []v1alpha1.InferenceStep{url(slow.URL)}}}), Listener: ln, Ready: ready, ShutdownTimeout: 5 * time.Second}, stop, discard)
	}()
	addr := "http://" + <-ready
	answered := make(chan string, 1)
	go func() {
		_, body := post(t, addr, `{}`)
		answered <- body
	}()
	require.Eventually(t, func() bool { return slow.calls.Load() == 1 }, 5*time.Second, time.Millisecond, "the request is in flight")
	stop <- os.Interrupt
	assert.Equal(t, `{"done":true}`, <-answered, "the request in flight was answered")
	assert.NoError(t, <-served)
}
