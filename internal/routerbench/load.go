package routerbench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// BackendResponse is what the test backend answers: a V1 prediction.
var BackendResponse = []byte(`{"predictions":[1,0,2]}`)

// BenchRequest is the request the load generator sends: a V1 request.
var BenchRequest = []byte(`{"instances":[[6.8,2.8,4.8,1.4],[6.0,3.4,4.5,1.6],[5.1,3.5,1.4,0.2]]}`)

// NewBackend returns the handler of the test backend.
func NewBackend() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = w.Write(BackendResponse)
	})
}

// LoadResult is one load run: requests per second and latency percentiles.
type LoadResult struct {
	Concurrency int           `json:"concurrency"`
	Requests    int           `json:"requests"`
	Errors      int           `json:"errors"`
	PerSecond   float64       `json:"requestsPerSecond"`
	P50         time.Duration `json:"p50"`
	P99         time.Duration `json:"p99"`
}

// String is the result on one line: concurrency, throughput, latencies
// and counts.
func (r LoadResult) String() string {
	return fmt.Sprintf("c=%d %.0f req/s p50 %s p99 %s (%d requests, %d errors)",
		r.Concurrency, r.PerSecond, r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Requests, r.Errors)
}

// Drive sends BenchRequest to url from concurrency clients in a closed loop
// for d, after a warm-up of a tenth of d, and measures.
func Drive(url string, concurrency int, d time.Duration) LoadResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency, MaxIdleConns: concurrency, DisableCompression: true}}
	defer client.CloseIdleConnections()
	var stop, measuring atomic.Bool
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<16)
			failed := 0
			for !stop.Load() {
				start := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(BenchRequest))
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
				if !measuring.Load() {
					continue
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					failed++
					continue
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			errs += failed
			mu.Unlock()
		}()
	}
	time.Sleep(d / 10)
	measuring.Store(true)
	began := time.Now()
	time.Sleep(d)
	stop.Store(true)
	elapsed := time.Since(began)
	wg.Wait()
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := LoadResult{Concurrency: concurrency, Requests: len(all), Errors: errs, PerSecond: float64(len(all)) / elapsed.Seconds()}
	if len(all) > 0 {
		r.P50, r.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}
