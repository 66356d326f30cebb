package router_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/serval-dev/serval/internal/routerbench"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/router"
)

// BenchmarkRouter sends requests through the router in-process, to a test
// backend, from a kept-alive client; Direct calls the backend alone. The
// router's own cost is the difference (allocations included). `serval
// bench graph` measures the same with each part in its own process.
func BenchmarkRouter(b *testing.B) {
	backend := httptest.NewServer(routerbench.NewBackend())
	defer backend.Close()
	step := func(name string) v1alpha1.InferenceStep {
		return named(name, url(backend.URL+"/v1/models/m:predict"))
	}
	graphs := map[string]*v1alpha1.InferenceGraphSpec{
		"Sequence1": graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{step("a")}}}),
		"Sequence3": graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence,
			Steps: []v1alpha1.InferenceStep{step("a"), with(step("b"), response), with(step("c"), response)}}}),
		"Ensemble3": graph(map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble,
			Steps: []v1alpha1.InferenceStep{step("a"), step("b"), step("c")}}}),
	}
	run := func(b *testing.B, target string) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		b.ReportAllocs()
		b.SetParallelism(8) // 16 clients on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := client.Post(target, "application/json", bytes.NewReader(routerbench.BenchRequest))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	}
	b.Run("Direct", func(b *testing.B) { run(b, backend.URL+"/v1/models/m:predict") })
	for _, name := range []string{"Sequence1", "Sequence3", "Ensemble3"} {
		b.Run(name, func(b *testing.B) {
			g, err := router.Compile(graphs[name], router.Options{}, router.NewMetrics(nil))
			if err != nil {
				b.Fatal(err)
			}
			run(b, start(b, router.NewHandler(g, router.Options{}, router.NewMetrics(nil))).URL)
		})
	}
}
