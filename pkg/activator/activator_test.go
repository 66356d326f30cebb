package activator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var model = Key{Namespace: "team-a", Name: "iris-predictor"}

// oneComponent resolves every request to model.
func oneComponent(*http.Request) (Key, bool) { return model, true }

// backend counts the requests it gets by their body, in order.
type backend struct {
	mu    sync.Mutex
	order []string
	seen  map[string]int
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	if b.seen == nil {
		b.seen = map[string]int{}
	}
	b.seen[string(body)]++
	b.order = append(b.order, string(body))
	b.mu.Unlock()
	_, _ = io.WriteString(w, "ok "+string(body))
}

// waitDemand waits until the component's demand is n.
func waitDemand(t *testing.T, a *Activator, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return a.Demand(model) == n }, 10*time.Second, time.Millisecond, "demand %d", n)
}

type answer struct {
	status     int
	body       string
	retryAfter string
}

func send(t *testing.T, url, body string) answer {
	resp, err := http.Post(url, "text/plain", strings.NewReader(body))
	if err != nil {
		return answer{status: -1, body: err.Error()}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(data), retryAfter: resp.Header.Get("Retry-After")}
}

// TestThousandHeldRequestsAllServedOnce: 1,000 requests sent at once to a
// component at zero are all held, then each is answered 200 once a
// replica is ready, and the replica sees each exactly once.
func TestThousandHeldRequestsAllServedOnce(t *testing.T) {
	be := &backend{}
	replica := httptest.NewServer(be)
	defer replica.Close()
	a := New(Limits{}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()

	const n = 1000
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = send(t, front.URL, fmt.Sprint(i)) })
	}
	waitDemand(t, a, n)
	a.SetBackend(model, strings.TrimPrefix(replica.URL, "http://"))
	wg.Wait()
	for i, ans := range answers {
		require.Equal(t, http.StatusOK, ans.status, "request %d: %s", i, ans.body)
		require.Equal(t, fmt.Sprintf("ok %d", i), ans.body)
	}
	require.Len(t, be.seen, n)
	for body, times := range be.seen {
		require.Equal(t, 1, times, "request %s forwarded once", body)
	}
	waitDemand(t, a, 0)
}

// dispatch records the order in which requests are sent.
type dispatch struct {
	mu    sync.Mutex
	order []string
}

func (d *dispatch) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.order = append(d.order, r.Header.Get("X-Seq"))
	d.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestHeldRequestsForwardedInArrivalOrder: requests held one after the
// other are sent to the replica in that order (each once the one before
// it is written; the replica then serves them concurrently).
func TestHeldRequestsForwardedInArrivalOrder(t *testing.T) {
	be := &backend{}
	replica := httptest.NewServer(be)
	defer replica.Close()
	d := &dispatch{}
	a := New(Limits{}, oneComponent, d, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	var wg sync.WaitGroup
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprint(i))
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, front.URL, strings.NewReader("x"))
			req.Header.Set("X-Seq", fmt.Sprint(i))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
			}
		})
		waitDemand(t, a, i+1)
	}
	a.SetBackend(model, strings.TrimPrefix(replica.URL, "http://"))
	wg.Wait()
	assert.Equal(t, want, d.order)
}

// TestBounds: past the queue, the body cap or the hold timeout a request
// is answered at once, naming the component, with Retry-After where
// retrying helps.
func TestBounds(t *testing.T) {
	a := New(Limits{MaxHeld: 2, MaxBodyBytes: 8, HoldTimeout: 300 * time.Millisecond, RetryAfter: 3 * time.Second}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()

	big := send(t, front.URL, "123456789")
	assert.Equal(t, http.StatusRequestEntityTooLarge, big.status)
	assert.Contains(t, big.body, "the request body is larger than the cap of 8 bytes")

	var wg sync.WaitGroup
	held := make([]answer, 2)
	for i := range 2 {
		wg.Go(func() { held[i] = send(t, front.URL, "x") })
	}
	waitDemand(t, a, 2)
	full := send(t, front.URL, "y")
	assert.Equal(t, http.StatusServiceUnavailable, full.status)
	assert.Equal(t, "3", full.retryAfter)
	var msg map[string]string
	require.NoError(t, json.Unmarshal([]byte(full.body), &msg))
	assert.Equal(t, "team-a/iris-predictor", msg["component"])
	assert.Contains(t, msg["error"], "holds 2 requests already")
	wg.Wait()
	for _, h := range held {
		assert.Equal(t, http.StatusServiceUnavailable, h.status)
		assert.Contains(t, h.body, "no replica became ready within 300ms")
		assert.Equal(t, "3", h.retryAfter)
	}
	waitDemand(t, a, 0)
}

// TestColdStartFailureAnswersTheHeld: a cold start that fails turns the
// held requests, and the next ones, into 503s naming the reason.
func TestColdStartFailureAnswersTheHeld(t *testing.T) {
	a := New(Limits{}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	done := make(chan answer)
	go func() { done <- send(t, front.URL, "x") }()
	waitDemand(t, a, 1)
	a.SetFailure(model, "ImagePullBackOff: the image example.com/model:1 does not pull")
	ans := <-done
	assert.Equal(t, http.StatusServiceUnavailable, ans.status)
	assert.Contains(t, ans.body, "the component cannot start: ImagePullBackOff")
	assert.Contains(t, send(t, front.URL, "y").body, "ImagePullBackOff", "while the failure lasts")
}

// TestShutdownAnswersTheHeld: on shutdown the held requests get 503s.
func TestShutdownAnswersTheHeld(t *testing.T) {
	a := New(Limits{}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	done := make(chan answer)
	go func() { done <- send(t, front.URL, "x") }()
	waitDemand(t, a, 1)
	a.Shutdown()
	ans := <-done
	assert.Equal(t, http.StatusServiceUnavailable, ans.status)
	assert.Contains(t, ans.body, "shutting down")
	assert.NotEmpty(t, ans.retryAfter)
}

// TestNoReplay: a replica that drops the connection after reading a
// request gets it once; the client gets a 502.
func TestNoReplay(t *testing.T) {
	var got atomic.Int32
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		got.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	defer replica.Close()
	a := New(Limits{}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	a.SetBackend(model, strings.TrimPrefix(replica.URL, "http://"))
	for range 2 { // the second reuses nothing: the first connection died
		ans := send(t, front.URL, "x")
		assert.Equal(t, http.StatusBadGateway, ans.status)
	}
	assert.Equal(t, int32(2), got.Load(), "each request reached the replica once")
}

// TestHeldBytesBound: what the activator holds is bounded by MaxHeldBytes
// across components: past it a request is answered 503 with Retry-After
// at once, and the heap grows by the bodies held and the requests' own
// buffers, not by what was refused.
func TestHeldBytesBound(t *testing.T) {
	const body = 64 << 10
	a := New(Limits{MaxHeldBytes: 16 << 20, MaxBodyBytes: body}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	transport := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: 600}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	payload := strings.Repeat("x", body)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 600 // 37.5 MiB of bodies offered; 256 fit under 16 MiB
	answers := make(chan answer, n)
	for range n {
		go func() {
			resp, err := client.Post(front.URL, "text/plain", strings.NewReader(payload))
			if err != nil {
				answers <- answer{status: -1}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			answers <- answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		}()
	}
	busy := 0
	for busy < n-256 {
		ans := <-answers
		require.Equal(t, http.StatusServiceUnavailable, ans.status)
		require.NotEmpty(t, ans.retryAfter)
		busy++
	}
	waitDemand(t, a, 256)
	var held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	grown := int64(held.HeapInuse) - int64(before.HeapInuse)
	// The bodies (16 MiB), and per request its server and client
	// connection buffers and goroutines (well under 64 KiB each).
	assert.Less(t, grown, int64(16<<20+256*64<<10), "heap grown by %d bytes", grown)
	a.Shutdown()
	for range 256 {
		assert.Equal(t, http.StatusServiceUnavailable, (<-answers).status)
	}
}

// TestForget: a component whose Service goes answers what it holds and
// leaves no state behind.
func TestForget(t *testing.T) {
	a := New(Limits{}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	done := make(chan answer)
	go func() { done <- send(t, front.URL, "x") }()
	waitDemand(t, a, 1)
	a.Forget(model)
	ans := <-done
	assert.Equal(t, http.StatusServiceUnavailable, ans.status)
	assert.Contains(t, ans.body, "Service is gone or no longer scales from zero")
	a.mu.Lock()
	defer a.mu.Unlock()
	assert.Empty(t, a.comps, "nothing kept of a component that is not there")
}

// TestWatchIsPerComponent: a component's watcher is told of its changes
// only, and a change made while it is busy is never lost.
func TestWatchIsPerComponent(t *testing.T) {
	a := New(Limits{}, oneComponent, nil, nil)
	changes, stop := a.Watch(model)
	defer stop()
	for i := range 1000 {
		a.SetFailure(Key{Namespace: "other", Name: fmt.Sprint(i)}, "x") // no one holds there: no change
		a.Forget(Key{Namespace: "other", Name: fmt.Sprint(i)})
	}
	select {
	case <-changes:
		t.Fatal("told of another component's changes")
	default:
	}
	front := httptest.NewServer(a)
	defer front.Close()
	go func() { send(t, front.URL, "x") }()
	select {
	case <-changes:
	case <-time.After(10 * time.Second):
		t.Fatal("not told that a request is held")
	}
	a.Shutdown()
}

// TestBodiesCountWhileRead: a body counts against MaxHeldBytes before its
// bytes are read into memory, not once it is whole: with the bound spent
// by bodies still arriving, the next request is answered 503 with
// Retry-After at once, and the bytes come back when the requests end. A
// body that does not arrive in time is 408.
func TestBodiesCountWhileRead(t *testing.T) {
	a := New(Limits{MaxHeldBytes: 512 << 10, MaxBodyBytes: 1 << 20, RetryAfter: 2 * time.Second}, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	// Two clients announce 600 KiB each and send half: the first takes
	// 448 KiB of buffers for it, the second finds the bound spent while
	// its body arrives.
	var writers []*io.PipeWriter
	answers := make(chan answer, 2)
	for range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, err := http.NewRequest(http.MethodPost, front.URL, pr)
		require.NoError(t, err)
		req.ContentLength = 600 << 10
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers <- answer{}
				return
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			answers <- answer{status: resp.StatusCode, body: string(data), retryAfter: resp.Header.Get("Retry-After")}
		}()
		wrote := make(chan struct{})
		go func() { _, _ = pw.Write(make([]byte, 300<<10)); close(wrote) }()
		if len(writers) == 1 {
			<-wrote // the first body's half is read before the second starts
		}
	}
	busy := <-answers
	assert.Equal(t, http.StatusServiceUnavailable, busy.status)
	assert.Equal(t, "2", busy.retryAfter)
	assert.Contains(t, busy.body, "the activator holds its limit of 524288 bytes of request bodies (maxHeldBytes)")
	assert.LessOrEqual(t, a.bodies.Held(), int64(512<<10))
	for _, w := range writers {
		_ = w.CloseWithError(io.ErrUnexpectedEOF)
	}
	<-answers
	require.Eventually(t, func() bool { return a.bodies.Held() == 0 }, 5*time.Second, 10*time.Millisecond, "the bytes given back")

	// A body that stops arriving: the server's read deadline ends it.
	slow := httptest.NewUnstartedServer(a)
	slow.Config.ReadTimeout = 200 * time.Millisecond
	slow.Start()
	defer slow.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, slow.URL, pr)
	require.NoError(t, err)
	req.ContentLength = 10
	go func() { _, _ = pw.Write([]byte("12345")) }()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Equal(t, int64(0), a.bodies.Held())
}

// TestBodiesBeingReadStayWithinTheBound: 150 clients each sending a body
// of 8 MiB - 1 byte at once to a component at zero (1.2 GB offered) raise
// the heap by at most maxHeldBytes plus 64 MiB: each body's buffers are
// taken from the bound before they are made, and those past it are
// refused while they arrive, not read whole first.
func TestBodiesBeingReadStayWithinTheBound(t *testing.T) {
	const maxHeld = 64 << 20
	limits := Limits{MaxHeldBytes: maxHeld, HoldTimeout: 3 * time.Second}
	// The soft memory limit the activator's binary runs under.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit(limits)))
	a := New(limits, oneComponent, nil, nil)
	front := httptest.NewServer(a)
	defer front.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 200}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	payload := strings.Repeat("x", DefaultMaxBodyBytes-1)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	const n = 150
	var wg sync.WaitGroup
	var answered, busy atomic.Int32
	for range n {
		wg.Go(func() {
			resp, err := client.Post(front.URL, "application/json", strings.NewReader(payload))
			if err != nil {
				return // refused while sending: the server closed the connection
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			answered.Add(1)
			if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				busy.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	grew := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("150 bodies of 8 MiB: the heap grew by at most %d MiB (maxHeldBytes %d MiB); %d answered, %d of them 503 with Retry-After",
		grew>>20, maxHeld>>20, answered.Load(), busy.Load())
	assert.Less(t, grew, int64(maxHeld+64<<20), "the heap while the bodies were read")
	assert.Positive(t, busy.Load(), "some were refused at the bound")
	assert.Equal(t, int64(0), a.bodies.Held(), "every byte given back")
}
