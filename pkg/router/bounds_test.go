package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/router"
)

// everyType is a graph of each router type over one backend URL, each
// sending the request on to it.
func everyType(u string) map[string]*v1alpha1.InferenceGraphSpec {
	out := map[string]*v1alpha1.InferenceGraphSpec{}
	for _, typ := range []v1alpha1.InferenceRouterType{v1alpha1.Sequence, v1alpha1.Switch, v1alpha1.Ensemble, v1alpha1.Splitter} {
		out[string(typ)] = oneStep(typ, u)
	}
	out["Sequence of two"] = graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(u), url(u)}}})
	return out
}

// TestResponseIsolation: two clients share the router's one pooled
// connection to a step while one of them keeps trying to smuggle a request
// in; each gets only its own answers.
func TestResponseIsolation(t *testing.T) {
	backend := newRecorder(t)
	attempts := []string{
		"POST / HTTP/1.1\r\nHost: r\r\nX-Client: evil\r\nContent-Length: 2\r\nTransfer-Encoding : chunked\r\n\r\n{}POST / HTTP/1.1\r\nHost: r\r\nX-Client: smuggled\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nX-Client: evil\rContent-Length: 60\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nX-Client: evil\r\nContent-Length : 2\r\n\r\n{}POST / HTTP/1.1\r\nHost: r\r\nX-Client: smuggled\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nX-Client: evil\r\nContent-Length: 2\r\nContent-Length: 64\r\n\r\n{}POST / HTTP/1.1\r\nHost: r\r\nX-Client: smuggled\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nX-Client: evil\r\nX-A: a\x00\r\nContent-Length: 2\r\n\r\n{}",
	}
	for name, spec := range everyType(backend.URL) {
		t.Run(name, func(t *testing.T) {
			addr := startRouter(t, spec, router.Options{MaxIdleConnsPerStep: 1, PropagateHeaders: []string{"X-Client"}}, router.ServerLimits{})
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					rawExchange(t, addr, []byte(attempts[i%len(attempts)]), 2)
				}
			})
			client := &http.Client{Transport: &http.Transport{}}
			for i := range 200 {
				req, err := http.NewRequest(http.MethodPost, "http://"+addr, strings.NewReader(`{}`))
				require.NoError(t, err)
				id := fmt.Sprintf("b-%d", i)
				req.Header.Set("X-Client", id)
				resp, err := client.Do(req)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				require.Equal(t, 200, resp.StatusCode, string(body))
				require.Equal(t, 1, strings.Count(string(body), `"for":`), string(body))
				require.Contains(t, string(body), `"for":"`+id+`"`, "request %s got another's answer: %s", id, body)
			}
			close(stop)
			wg.Wait()
			for _, r := range backend.settle(t) {
				assert.NotEqual(t, "smuggled", r.header.Get("X-Client"), "a smuggled request reached the step")
			}
		})
	}
}

// TestBufferedBodyCap: every node that reads the body first refuses one
// over the cap with 413, whether its length is announced or not.
func TestBufferedBodyCap(t *testing.T) {
	backend := newRecorder(t)
	for name, spec := range everyType(backend.URL) {
		t.Run(name, func(t *testing.T) {
			addr := startRouter(t, spec, router.Options{MaxRequestBodyBytes: 1 << 20}, router.ServerLimits{})
			for _, chunked := range []bool{false, true} {
				var body io.Reader = strings.NewReader(`{"x":"` + strings.Repeat("a", 2<<20) + `"}`)
				if chunked {
					body = io.MultiReader(body)
				}
				resp, err := http.Post("http://"+addr, "application/json", body)
				require.NoError(t, err)
				data, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "chunked=%v: %s", chunked, data)
				assert.Contains(t, string(data), "larger than the cap of 1048576 bytes")
			}
			assert.Empty(t, backend.settle(t), "no step got a request over the cap")
		})
	}
}

// TestResponseBodyCap: a step's response over the cap fails the step with
// 502 naming it.
func TestResponseBodyCap(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"x":"` + strings.Repeat("a", 2<<20) + `"}`))
	}))
	t.Cleanup(big.Close)
	for name, spec := range everyType(big.URL) {
		t.Run(name, func(t *testing.T) {
			for i := range spec.Nodes["root"].Steps {
				spec.Nodes["root"].Steps[i].Dependency = v1alpha1.Hard
			}
			addr := startRouter(t, spec, router.Options{MaxResponseBodyBytes: 1 << 20}, router.ServerLimits{})
			resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
			require.NoError(t, err)
			data, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				// A node that streams the answer has sent its status
				// already: the client sees the body cut short.
				assert.Error(t, err, "the client learns the body was cut short")
				assert.Less(t, len(data), 2<<20)
				return
			}
			assert.Equal(t, http.StatusBadGateway, resp.StatusCode, string(data))
			assert.Contains(t, string(data), "the step's response is larger than the cap of 1048576 bytes")
		})
	}
}

// TestStalledTLSHandshake: a step at an https URL whose server accepts
// but never completes the handshake is cut at the step's deadline.
func TestStalledTLSHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	addr := startRouter(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{named("tls", with(url("https://"+ln.Addr().String()), hard))}}}),
		router.Options{StepTimeout: 300 * time.Millisecond}, router.ServerLimits{})
	start := time.Now()
	resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(data))
	assert.JSONEq(t, `{"error":"node root: step tls: the step did not answer in time","node":"root","step":"tls"}`, string(data))
	assert.Less(t, time.Since(start), 2*time.Second)
}

// TestDepthAndFanOutLimits: a graph deeper, or calling more steps, than
// the router's limits is refused when the router starts, with admission's
// words, as admission refuses it: a router started by hand serves no graph
// the cluster would not admit. One within them is served.
func TestDepthAndFanOutLimits(t *testing.T) {
	backend := newRecorder(t)
	// chain is a graph of n nodes, each calling the next twice; the last
	// calls the backend.
	chain := func(n int) *v1alpha1.InferenceGraphSpec {
		nodes := map[string]v1alpha1.InferenceRouter{}
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			if i == 0 {
				name = "root"
			}
			next := nodeStep(fmt.Sprintf("n%d", i+1))
			if i == n-1 {
				next = url(backend.URL)
			}
			nodes[name] = v1alpha1.InferenceRouter{RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{with(next, hard), with(next, hard)}}
		}
		return graph(nodes)
	}
	addr := startRouter(t, chain(3), router.Options{MaxDepth: 3, MaxStepCalls: 8}, router.ServerLimits{})
	resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, backend.settle(t), 8, "calls that reached the backend")

	for _, tt := range []struct {
		name    string
		o       router.Options
		message string
	}{
		{"too deep", router.Options{MaxDepth: 3, MaxStepCalls: 100},
			"spec.nodes: a request would pass a chain of 4 nodes; the limit is 3 (the manager's --graph-max-depth)"},
		{"too many calls", router.Options{MaxDepth: 10, MaxStepCalls: 8},
			"spec.nodes: a request could make 16 step calls; the limit is 8 (the manager's --graph-max-step-calls)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := router.Compile(chain(4), tt.o, nil)
			require.Error(t, err)
			assert.Equal(t, tt.message, err.Error())
		})
	}
}

// TestSlowloris: a client trickling its headers is cut at the read-header
// timeout, and another client is served meanwhile.
func TestSlowloris(t *testing.T) {
	backend := newRecorder(t)
	addr := startRouter(t, oneStep(v1alpha1.Sequence, backend.URL), router.Options{}, router.ServerLimits{ReadHeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	start := time.Now()
	go func() {
		for _, b := range []byte("POST / HTTP/1.1\r\nHost: r\r\nX-Slow: " + strings.Repeat("a", 100)) {
			if _, err := c.Write([]byte{b}); err != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(c)
	assert.NoError(t, err, "the router closed the connection")
	assert.Less(t, time.Since(start), 2*time.Second, "cut at the read-header timeout, not when the client is done")

	status, _ := post(t, "http://"+addr, `{}`)
	assert.Equal(t, 200, status, "another client is served")
}

// TestFailingStepsAreNotReplayed: a step that hangs gives 504, one that
// closes mid-response or without answering gives 502, each naming the
// step; a POST never reaches a step twice, on a fresh connection or a
// kept-alive one, idempotency key or not.
func TestFailingStepsAreNotReplayed(t *testing.T) {
	var calls atomic.Int32
	var mode atomic.Value
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		calls.Add(1)
		switch mode.Load() {
		case "hang":
			<-r.Context().Done()
		case "close":
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
		case "cut":
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte(`{"partial":`))
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(b.Close)
	tests := []struct {
		mode, want string
		status     int
	}{
		{"hang", "node root: step s: the step did not answer in time", 504},
		{"close", "node root: step s: the step closed the connection without a complete response", 502},
		{"cut", "node root: step s: the step closed the connection without a complete response", 502},
	}
	spec := graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble,
		Steps: []v1alpha1.InferenceStep{named("s", with(url(b.URL), hard))}}})
	addr := startRouter(t, spec, router.Options{StepTimeout: 300 * time.Millisecond, PropagateHeaders: []string{"Idempotency-Key"}}, router.ServerLimits{})
	for _, tt := range tests {
		for _, key := range []string{"", "k1"} {
			t.Run(tt.mode+"/idempotency key "+key, func(t *testing.T) {
				mode.Store("")
				status, _ := post(t, "http://"+addr, `{}`) // a kept-alive connection to the step
				require.Equal(t, 200, status)
				mode.Store(tt.mode)
				calls.Store(0)
				var hdr []string
				if key != "" {
					hdr = []string{"Idempotency-Key", key}
				}
				status, body := post(t, "http://"+addr, `{}`, hdr...)
				assert.Equal(t, tt.status, status)
				var e struct{ Error string }
				require.NoError(t, json.Unmarshal([]byte(body), &e), body)
				assert.Equal(t, tt.want, e.Error)
				assert.Equal(t, int32(1), calls.Load(), "the POST reached the step once")
			})
		}
	}
}

// TestNoStepCalledAfterTheClientLeft: a client that leaves while a
// Sequence of Soft steps runs its first step gets no further step called,
// or tried: the later steps are neither sent nor logged as failed.
func TestNoStepCalledAfterTheClientLeft(t *testing.T) {
	var calls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	t.Cleanup(slow.Close)
	spec := graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(slow.URL), url(slow.URL), url(slow.URL)}}})
	var logged logCount
	addr := startRouter(t, spec, router.Options{Log: slog.New(&logged)}, router.ServerLimits{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr, strings.NewReader(`{}`))
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err, "the client gave up")
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, int32(1), calls.Load(), "steps called")
	assert.LessOrEqual(t, logged.n.Load(), int32(1), "step calls tried and logged as failed")
}

// logCount is a slog handler that counts the records it gets.
type logCount struct{ n atomic.Int32 }

func (*logCount) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCount) Handle(context.Context, slog.Record) error { c.n.Add(1); return nil }

func (c *logCount) WithAttrs([]slog.Attr) slog.Handler { return c }

func (c *logCount) WithGroup(string) slog.Handler { return c }
