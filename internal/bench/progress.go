package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readyTracker records, from a watch, when each object of a list kind first
// met a condition, relative to a start time.
type readyTracker struct {
	mu    sync.Mutex
	start time.Time
	at    map[string]time.Duration
	// key names the object an event is about ("" to ignore it); ready says
	// whether it has met the condition.
	key   func(client.Object) string
	ready func(client.Object) bool
	done  chan struct{}
	want  int
	// parts, when above 1, is how many objects of a key (by kind and name)
	// must be ready for the key to be.
	parts int
	seen  map[string]map[string]bool
}

func newReadyTracker(want int, key func(client.Object) string, ready func(client.Object) bool) *readyTracker {
	return &readyTracker{at: map[string]time.Duration{}, key: key, ready: ready, want: want, done: make(chan struct{})}
}

// run watches list's kind in ns until ctx ends, re-watching from the last
// version seen when the API server ends a watch.
func (r *readyTracker) run(ctx context.Context, c client.WithWatch, list client.ObjectList, ns string) error {
	rv := ""
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{
			ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch: %w", err)
		}
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue // an error status: watch again
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				r.observe(obj)
			}
		}
		w.Stop()
	}
	return nil
}

// begin sets the time the figures are relative to.
func (r *readyTracker) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = time.Now()
}

func (r *readyTracker) observe(obj client.Object) {
	k := r.key(obj)
	if k == "" || !r.ready(obj) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.at[k]; seen || r.start.IsZero() {
		return
	}
	if r.parts > 1 {
		if r.seen == nil {
			r.seen = map[string]map[string]bool{}
		}
		if r.seen[k] == nil {
			r.seen[k] = map[string]bool{}
		}
		r.seen[k][fmt.Sprintf("%T/%s", obj, obj.GetName())] = true
		if len(r.seen[k]) < r.parts {
			return
		}
	}
	r.at[k] = time.Since(r.start)
	if len(r.at) == r.want {
		close(r.done)
	}
}

func (r *readyTracker) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.at)
}

// wait returns when every wanted object is ready, or an error after timeout.
func (r *readyTracker) wait(ctx context.Context, timeout time.Duration) error {
	select {
	case <-r.done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%d of %d ready after %s", r.count(), r.want, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Percentiles are the times at which half, nine tenths and all of the
// objects were ready, in seconds from the first create.
type Percentiles struct {
	P50  float64 `json:"p50Seconds"`
	P90  float64 `json:"p90Seconds"`
	P100 float64 `json:"p100Seconds"`
}

func (r *readyTracker) percentiles() Percentiles {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ds []time.Duration
	for _, d := range r.at {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		i := int(q*float64(len(ds))+0.999999) - 1
		return ds[max(i, 0)].Seconds()
	}
	return Percentiles{P50: at(0.5), P90: at(0.9), P100: at(1)}
}
