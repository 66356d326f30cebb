package router_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/router"
)

// TestHTTP1Loop speaks raw HTTP/1.x to the router's own server.
func TestHTTP1Loop(t *testing.T) {
	b := newEcho(t, "a")
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{})
	addr := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name, request string
		// want are the responses' status lines and bodies, in order.
		want []string
		// closes: the server closes the connection after the responses.
		closes bool
	}{
		{"two requests on one connection", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 7\r\n\r\n{\"x\":1}" +
			"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 7\r\n\r\n{\"x\":2}",
			[]string{"200", `{"a":{"x":1}}`, "200", `{"a":{"x":2}}`}, false},
		{"a chunked request", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"x\r\n4\r\n\":3}\r\n0\r\n\r\n",
			[]string{"200", `{"a":{"x":3}}`}, false},
		{"Connection: close", "POST / HTTP/1.1\r\nHost: r\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
			[]string{"200", `{"a":{}}`}, true},
		{"HTTP/1.0 closes", "POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}", []string{"200", `{"a":{}}`}, true},
		{"Expect: 100-continue", "POST / HTTP/1.1\r\nHost: r\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
			[]string{"100", "", "200", `{"a":{}}`}, false},
		{"a health check", "GET /readyz HTTP/1.1\r\nHost: r\r\n\r\n", []string{"200", "ok"}, false},
		{"a malformed request line", "POST\r\n\r\n", []string{"400", "malformed request line\n"}, true},
		{"an unsupported transfer encoding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
			[]string{"501", "unsupported Transfer-Encoding gzip\n"}, true},
		{"HTTP/2 without its preface", "POST / HTTP/2.0\r\n\r\n", []string{"505", "unsupported protocol HTTP/2.0\n"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			_, err = io.WriteString(c, tt.request)
			require.NoError(t, err)
			br := bufio.NewReader(c)
			for i := 0; i < len(tt.want); i += 2 {
				resp, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, tt.want[i], resp.Status[:3])
				assert.Equal(t, tt.want[i+1], string(body))
			}
			require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
			_, err = br.ReadByte()
			if tt.closes {
				assert.ErrorIs(t, err, io.EOF, "the server closed the connection")
			} else {
				var ne net.Error
				assert.ErrorAs(t, err, &ne, "the connection stays open")
			}
		})
	}
}

// TestGracefulShutdown: a request in flight is answered; the idle
// connection and the listener are closed.
func TestGracefulShutdown(t *testing.T) {
	slow := newBackend(t, 200, `{"done":true}`)
	slow.delay = 500 * time.Millisecond
	g, err := router.Compile(graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(slow.URL)}}}), router.Options{}, nil)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := router.NewServer(router.NewHandler(g, router.Options{}, nil), 0, 0, 0)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	idle, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer idle.Close()

	answered := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String(), "application/json", strings.NewReader(`{}`))
		if err != nil {
			answered <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		answered <- string(body)
	}()
	time.Sleep(100 * time.Millisecond) // the request is in flight
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	assert.Equal(t, `{"done":true}`, <-answered, "the request in flight was answered")
	assert.ErrorIs(t, <-served, http.ErrServerClosed)
	_ = idle.SetReadDeadline(time.Now().Add(time.Second))
	_, err = idle.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the idle connection was closed")
	_, err = net.Dial("tcp", ln.Addr().String())
	assert.Error(t, err, "the listener is closed")
}

// TestNoContent: a step that answers 204 without a length is answered at
// once, not after its connection closes.
func TestNoContent(t *testing.T) {
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(b.Close)
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{StepTimeout: 2 * time.Second})
	start := time.Now()
	status, body := post(t, srv.URL, `{}`)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Empty(t, body)
	assert.Less(t, time.Since(start), time.Second)
}

// TestCutShortResponse: a step whose response ends before its length ends
// the client's connection too, rather than leave it waiting.
func TestCutShortResponse(t *testing.T) {
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte(`{"partial":`))
		hj, ok := w.(http.Hijacker)
		if !ok {
			return
		}
		conn, _, _ := hj.Hijack()
		_ = conn.Close()
	}))
	t.Cleanup(b.Close)
	srv, _ := serve(t, graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
		Steps: []v1alpha1.InferenceStep{url(b.URL)}}}), router.Options{StepTimeout: 2 * time.Second})
	start := time.Now()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Error(t, err, "the client learns the body was cut short")
	assert.Less(t, time.Since(start), 5*time.Second, "at once, not when an idle timeout closes the connection")
}
