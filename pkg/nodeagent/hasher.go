package nodeagent

import (
	"context"
	"io"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// hasher measures copies (their size and digest) off the reconcile
// goroutine, one copy at a time, each within a deadline and all within a
// read budget in bytes per second: hashing a model of hundreds of
// gigabytes must neither hold up the node's other models nor take the
// node's disk and CPU from its workloads. When a measurement ends, done is
// called (the agent enqueues its node) and the next reconcile reads it.
type hasher struct {
	disk    Disk
	limiter *rate.Limiter
	timeout time.Duration
	done    func()
	now     func() time.Time

	mu      sync.Mutex
	results map[string]measurement
	queue   []string
	queued  map[string]bool
	running bool
}

// measurement is one finished measurement of a copy.
type measurement struct {
	started time.Time
	size    int64
	digest  string
	err     error
}

// hashBurst is the largest read the budget grants at once.
const hashBurst = 1 << 20

func newHasher(d Disk, bytesPerSecond int64, timeout time.Duration, done func(), now func() time.Time) *hasher {
	return &hasher{disk: d, limiter: rate.NewLimiter(rate.Limit(bytesPerSecond), hashBurst), timeout: timeout, done: done, now: now,
		results: map[string]measurement{}, queued: map[string]bool{}}
}

// Result returns the latest measurement of key that started at or after
// notBefore, and true; or, when there is none, queues one (unless queued)
// and returns false.
func (h *hasher) Result(key string, notBefore time.Time) (measurement, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, ok := h.results[key]; ok && !m.started.Before(notBefore) {
		return m, true
	}
	if !h.queued[key] {
		h.queued[key] = true
		h.queue = append(h.queue, key)
		if !h.running {
			h.running = true
			go h.work()
		}
	}
	return measurement{}, false
}

// Forget drops what is known of key (its copy was deleted).
func (h *hasher) Forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.results, key)
}

// work measures the queued copies one after another.
func (h *hasher) work() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		key := h.queue[0]
		h.queue = h.queue[1:]
		h.mu.Unlock()

		m := measurement{started: h.now()}
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
		m.size, m.digest, m.err = h.disk.measure(key, func(r io.Reader) io.Reader { return &budgetReader{ctx: ctx, r: r, limiter: h.limiter} })
		cancel()

		h.mu.Lock()
		h.results[key] = m
		delete(h.queued, key)
		h.mu.Unlock()
		h.done()
	}
}

// budgetReader reads within a limiter's bytes per second, until ctx ends.
type budgetReader struct {
	ctx     context.Context
	r       io.Reader
	limiter *rate.Limiter
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if len(p) > hashBurst {
		p = p[:hashBurst]
	}
	if err := b.limiter.WaitN(b.ctx, len(p)); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}
