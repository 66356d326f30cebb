package router_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnnouncedLengthsCostNothing: 200 connections that each announce a
// 64 MiB body to an Ensemble and send one byte (headers only, under 40 KB
// of traffic in all) leave the router's peak resident memory where an idle
// router's is: bodies are read into buffers that grow with the bytes that
// arrive, not with what is announced.
func TestAnnouncedLengthsCostNothing(t *testing.T) {
	backend := newRecorder(t)
	graphJSON := `{"nodes":{"root":{"routerType":"Ensemble","steps":[{"name":"a","serviceUrl":"` + backend.URL + `"}]}}}`
	addr, p := routerProcess(t, graphJSON, nil)
	idle := peakRSS(t, p)
	var conns []net.Conn
	for range 200 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 64<<20)
		require.NoError(t, err)
	}
	time.Sleep(500 * time.Millisecond) // every request is being read
	for _, c := range conns {
		_ = c.Close()
	}
	rss := peakRSS(t, p)
	t.Logf("peak RSS idle %d MiB, after 200 announced 64 MiB bodies %d MiB", idle>>20, rss>>20)
	assert.Less(t, rss-idle, int64(32<<20), "what 200 announced bodies cost the router")
	assert.Empty(t, backend.settle(t))
}

// TestBufferBudgetAnswersBusy: bodies that together pass
// --max-buffered-bytes are answered 503 with Retry-After and a JSON
// message, while the router stays within the budget; once they are gone,
// the next request is served.
func TestBufferBudgetAnswersBusy(t *testing.T) {
	backend := newRecorder(t)
	graphJSON := `{"nodes":{"root":{"routerType":"Switch","steps":[{"name":"a","serviceUrl":"` + backend.URL + `"}]}}}`
	addr, p := routerProcess(t, graphJSON, nil, "--max-buffered-bytes=16777216")
	const clients, size = 12, 8 << 20
	// Each client sends all but the last byte of its body, then waits, so
	// that every body is held at once.
	release := make(chan struct{})
	statuses := make(chan *http.Response, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr, pw := io.Pipe()
			go func() {
				_, _ = io.Copy(pw, io.LimitReader(zeros{}, size-1))
				<-release
				_, _ = pw.Write([]byte{0})
				_ = pw.Close()
			}()
			req, err := http.NewRequest(http.MethodPost, "http://"+addr, pr)
			if err != nil {
				return
			}
			req.ContentLength = size
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			statuses <- resp
		}()
	}
	time.Sleep(2 * time.Second)
	close(release)
	wg.Wait()
	close(statuses)
	busy := 0
	for resp := range statuses {
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			busy++
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			assert.Contains(t, string(body), "(--max-buffered-bytes); try again shortly")
		}
	}
	assert.GreaterOrEqual(t, busy, clients-2, "at most two 8 MiB bodies fit a 16 MiB budget")
	rss := peakRSS(t, p)
	t.Logf("peak RSS with %d bodies of %d MiB against a 16 MiB budget: %d MiB", clients, size>>20, rss>>20)
	assert.Less(t, rss, int64(96<<20))

	resp, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{"x":1}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.NotEqual(t, http.StatusServiceUnavailable, resp.StatusCode, "the budget is given back")
}
