package activator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkColdStart measures the activator's share of a cold start: from
// the moment a replica is ready (SetBackend) to the held request reaching
// it. The p50 of the runs is reported as p50-ns (the target is 50 ms).
func BenchmarkColdStart(b *testing.B) {
	reached := make(chan time.Time, 1)
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer replica.Close()
	backend := strings.TrimPrefix(replica.URL, "http://")
	var took []time.Duration
	for b.Loop() {
		a := New(Limits{}, oneComponent, nil, nil)
		front := httptest.NewServer(a)
		done := make(chan struct{})
		go func() {
			resp, err := http.Post(front.URL, "application/json", strings.NewReader(`{"instances":[[1,2,3,4]]}`))
			if err == nil {
				_ = resp.Body.Close()
			}
			close(done)
		}()
		for a.Demand(model) == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		ready := time.Now()
		a.SetBackend(model, backend)
		took = append(took, (<-reached).Sub(ready))
		<-done
		front.Close()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkForward measures the path of a request while the activator
// still fronts a ready component (before its EndpointSlice goes), against
// calling the replica directly.
func BenchmarkForward(b *testing.B) {
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"predictions":[1]}`)
	}))
	defer replica.Close()
	a := New(Limits{}, oneComponent, nil, nil)
	a.SetBackend(model, strings.TrimPrefix(replica.URL, "http://"))
	front := httptest.NewServer(a)
	defer front.Close()
	for _, target := range []struct{ name, url string }{{"direct", replica.URL}, {"activator", front.URL}} {
		b.Run(target.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := http.Post(target.url, "application/json", strings.NewReader(`{"instances":[[1,2,3,4]]}`))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}
