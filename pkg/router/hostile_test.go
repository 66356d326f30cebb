package router_test

import (
	"bufio"
	"bytes"
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

// recorder is a model server that keeps every request it received whole:
// its headers and body. A request whose body did not arrive whole is not
// a request it received.
type recorder struct {
	*httptest.Server
	mu       sync.Mutex
	got      []recorded
	inFlight atomic.Int32
}

type recorded struct {
	header http.Header
	body   []byte
}

func newRecorder(t testing.TB) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.got = append(r.got, recorded{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		// The answer names the request, so that a client can tell its own
		// answer from another's.
		_, _ = w.Write([]byte(`{"for":"` + req.Header.Get("X-Client") + `"}`))
	}))
	t.Cleanup(r.Close)
	return r
}

// settle waits until no request is in the backend's hands, then returns
// and forgets what it received.
func (r *recorder) settle(t testing.TB) []recorded {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.inFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// routerSet sets every header the router adds to a step's request itself:
// the subset rule below does not apply to them.
var routerSet = map[string]bool{"Host": true, "User-Agent": true, "Content-Length": true, "Accept-Encoding": true, "Content-Type": true}

// checkSubset fails unless every header the backend received, besides
// those the router sets, was sent by the client: name and value.
func checkSubset(t testing.TB, raw []byte, got recorded) {
	t.Helper()
	// An obs-fold means a space (RFC 9112 5.2).
	sent := strings.NewReplacer("\r\n ", " ", "\r\n\t", " ", "\n ", " ", "\n\t", " ").Replace(strings.ToLower(string(raw)))
	for name, values := range got.header {
		if routerSet[name] {
			continue
		}
		for _, v := range values {
			if !strings.Contains(sent, strings.ToLower(name)+":") || !strings.Contains(sent, strings.ToLower(v)) {
				t.Errorf("the backend received %s: %q, which the client did not send", name, v)
			}
		}
	}
}

// rawExchange writes raw to a new connection to addr and reads up to want
// responses; it returns their statuses and whether the server closed the
// connection after them.
func rawExchange(t testing.TB, addr string, raw []byte, want int) []int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = c.Write(raw) }()
	br := bufio.NewReader(c)
	var statuses []int
	for len(statuses) < want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			break
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
		if err != nil || resp.Close {
			break
		}
	}
	return statuses
}

// startRouter serves spec with the router's own server, as cmd/router does,
// passing every header to the steps.
func startRouter(t testing.TB, spec *v1alpha1.InferenceGraphSpec, o router.Options, l router.ServerLimits) string {
	t.Helper()
	if o.PropagateHeaders == nil {
		o.PropagateHeaders = []string{"*"}
	}
	g, err := router.Compile(spec, o, nil)
	require.NoError(t, err)
	return listen(t, router.NewHandler(g, o, nil), l)
}

func oneStep(typ v1alpha1.InferenceRouterType, u string) *v1alpha1.InferenceGraphSpec {
	s := url(u)
	if typ == v1alpha1.Splitter {
		s = with(s, weight(100))
	}
	return graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: typ, Steps: []v1alpha1.InferenceStep{s}}})
}

const okRequest = "POST / HTTP/1.1\r\nHost: router\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// TestHostileRequests sends malformed and hostile requests as raw bytes.
// For each: the status the client gets, and that the backend received
// either nothing or exactly the well-formed requests the case names, with
// no header the client did not send.
func TestHostileRequests(t *testing.T) {
	backend := newRecorder(t)
	bigHeaders := "X-Big: " + strings.Repeat("a", 2<<20) + "\r\n"
	tests := []struct {
		name string
		raw  string
		// want are the statuses the client gets, in order; backend is how
		// many requests reach the backend.
		want    []int
		backend int
	}{
		{"well-formed", okRequest, []int{200}, 1},
		{"space before the colon of Content-Length", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length : 2\r\n\r\n{}", []int{400}, 0},
		{"space before the colon of Transfer-Encoding, with Content-Length",
			"POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"Content-Length and Transfer-Encoding together: chunked wins, Content-Length dropped",
			"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", []int{200}, 1},
		{"chunked not last", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n", []int{501}, 0},
		{"an encoding before chunked", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", []int{501}, 0},
		{"two Transfer-Encoding headers", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", []int{501}, 0},
		{"an invalid chunk size", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", []int{400}, 0},
		{"a chunk size that overflows", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n{}\r\n0\r\n\r\n", []int{400}, 0},
		{"a chunk extension with a NUL (the body is framed anew; extensions never pass)",
			"POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n2;a=\x00\r\n{}\r\n0\r\n\r\n", []int{200}, 1},
		{"a chunk of the wrong size", "POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{}\r\n0\r\n\r\n", []int{400}, 0},
		{"two different Content-Lengths", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 2\r\nContent-Length: 4\r\n\r\n{}{}", []int{400}, 0},
		{"a signed Content-Length", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length: +2\r\n\r\n{}", []int{400}, 0},
		{"a negative Content-Length", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length: -1\r\n\r\n{}", []int{400}, 0},
		{"a Content-Length over the body cap", "POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 99999999999\r\n\r\n{}", []int{413}, 0},
		{"no Host", "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"two Hosts", "POST / HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"2 MiB of headers", "POST / HTTP/1.1\r\nHost: r\r\n" + bigHeaders + "Content-Length: 2\r\n\r\n{}", []int{431}, 0},
		{"a request line over the cap", "POST /" + strings.Repeat("a", 2<<20) + " HTTP/1.1\r\nHost: r\r\nContent-Length: 2\r\n\r\n{}", []int{431}, 0},
		{"a bare CR in a header value", "POST / HTTP/1.1\r\nHost: r\r\nX-A: a\rX-Injected: 1\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"a forged Authorization after a bare CR", "POST / HTTP/1.1\r\nHost: r\r\nX-A: a\rAuthorization: Bearer forged\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"a NUL in a header name", "POST / HTTP/1.1\r\nHost: r\r\nX-\x00A: 1\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"a NUL in a header value", "POST / HTTP/1.1\r\nHost: r\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"a control byte in a header value", "POST / HTTP/1.1\r\nHost: r\r\nX-A: a\x01b\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"a space in a header name", "POST / HTTP/1.1\r\nHost: r\r\nX A: 1\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
		{"an obs-fold line, replaced by a space as RFC 9112 allows", "POST / HTTP/1.1\r\nHost: r\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\n{}", []int{200}, 1},
		{"an unknown Expect", "POST / HTTP/1.1\r\nHost: r\r\nExpect: 100-banana\r\nContent-Length: 2\r\n\r\n{}", []int{417}, 0},
		{"absolute-form target", "POST http://router/ HTTP/1.1\r\nHost: router\r\nContent-Length: 2\r\n\r\n{}", []int{200}, 1},
		{"asterisk-form target", "OPTIONS * HTTP/1.1\r\nHost: r\r\n\r\n", []int{200}, 0},
		{"HTTP/1.0 with keep-alive, twice: the connection closes after the first (RFC 9112 6.1)",
			strings.Repeat("POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}", 2), []int{200}, 1},
		{"Transfer-Encoding on HTTP/1.0, framed by its Content-Length, then the connection closes",
			"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n{}" + okRequest, []int{200}, 1},
		{"Content-Length and chunked together, then another request: the connection closes after the first (RFC 9112 6.1)",
			"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n" + okRequest, []int{200}, 1},
		{"pipelined requests", okRequest + okRequest + okRequest, []int{200, 200, 200}, 3},
		{"a second request smuggled in a body shorter than sent",
			"POST / HTTP/1.1\r\nHost: r\r\nContent-Length: 2\r\n\r\n{}GET /x HTTP/1.1\r\nContent-Length : 5\r\n\r\n", []int{200, 400}, 1},
		{"a later HTTP/1 minor version, served as HTTP/1.1", "POST / HTTP/1.7\r\nHost: r\r\nContent-Length: 2\r\n\r\n{}", []int{200}, 1},
		{"HTTP/3 over TCP", "POST / HTTP/3.0\r\nHost: r\r\nContent-Length: 2\r\n\r\n{}", []int{505}, 0},
		{"a malformed request line", "POST  / HTTP/1.1\r\nHost: r\r\nContent-Length: 2\r\n\r\n{}", []int{400}, 0},
	}
	for _, typ := range []v1alpha1.InferenceRouterType{v1alpha1.Sequence, v1alpha1.Switch} {
		addr := startRouter(t, oneStep(typ, backend.URL), router.Options{}, router.ServerLimits{})
		for _, tt := range tests {
			t.Run(string(typ)+"/"+tt.name, func(t *testing.T) {
				got := rawExchange(t, addr, []byte(tt.raw), len(tt.want))
				assert.Equal(t, tt.want, got, "statuses")
				received := backend.settle(t)
				assert.Len(t, received, tt.backend, "requests the backend received")
				for _, r := range received {
					checkSubset(t, []byte(tt.raw), r)
					assert.Equal(t, "{}", string(r.body))
				}
			})
		}
	}
}

// TestHTTP10GetsNoChunks: an HTTP/1.0 client gets a body delimited by the
// connection's end or its length, never chunks, which HTTP/1.0 lacks.
func TestHTTP10GetsNoChunks(t *testing.T) {
	chunky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for range 3 {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 40<<10))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(chunky.Close)
	addr := startRouter(t, oneStep(v1alpha1.Sequence, chunky.URL), router.Options{}, router.ServerLimits{})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}"))
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	raw, err := io.ReadAll(c)
	require.NoError(t, err)
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok)
	assert.NotContains(t, strings.ToLower(string(head)), "transfer-encoding")
	assert.Equal(t, 120<<10, len(body), "the body as sent, without chunk framing")
}

// discard is a logger that drops everything.
var discard = slog.New(slog.DiscardHandler)

// FuzzRawRequest sends raw bytes to a running router in front of a
// recording backend. Whatever the bytes, the backend never receives more
// requests than the bytes hold, never a header the client did not send,
// and the router keeps serving.
func FuzzRawRequest(f *testing.F) {
	for _, seed := range []string{
		okRequest,
		"POST / HTTP/1.1\r\nHost: r\r\nContent-Length : 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: r\r\nX-A: a\rAuthorization: forged\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}" + okRequest,
		"POST / HTTP/1.1\r\nHost: r\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\n{}",
		"POST / HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nX-Trailer: 1\r\n\r\n",
		"GET /readyz HTTP/1.1\r\nHost: r\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	backend := newRecorder(f)
	// Short server timeouts close each connection soon after its last
	// answer or its incomplete request, so that the router's close marks
	// the end of what the bytes caused. Half-closing instead would cancel
	// step calls already on their way, and the backend could record them
	// after the check.
	limits := router.ServerLimits{ReadHeaderTimeout: 30 * time.Millisecond, ReadTimeout: 60 * time.Millisecond, IdleTimeout: 30 * time.Millisecond}
	addr := startRouter(f, oneStep(v1alpha1.Sequence, backend.URL), router.Options{}, limits)
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write(raw)
		_, _ = io.Copy(io.Discard, c)
		_ = c.Close()
		received := backend.settle(t)
		if n := bytes.Count(bytes.ToUpper(raw), []byte("HTTP/")); len(received) > n {
			t.Fatalf("the backend received %d requests; the bytes hold at most %d", len(received), n)
		}
		for _, r := range received {
			checkSubset(t, raw, r)
		}
		resp, err := http.Get("http://" + addr + "/livez")
		require.NoError(t, err, "the router still serves")
		_ = resp.Body.Close()
	})
}
