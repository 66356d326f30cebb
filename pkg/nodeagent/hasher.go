package nodeagent

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
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
//
// A copy is sized by a stat of its files first: one larger than its bound
// (the modelSize its cache declares) is measured without a byte read, and
// no copy is read past its bound. The queue is served smallest copy first,
// so that a large copy (one tenant's) never holds up the small ones
// (another's) that arrive while it is read.
type hasher struct {
	disk    Disk
	limiter *rate.Limiter
	timeout time.Duration
	done    func()
	now     func() time.Time

	mu      sync.Mutex
	results map[string]measurement
	// queued are the keys waiting, each with its bound (-1: none).
	queued  map[string]int64
	running bool
}

// measurement is one finished measurement of a copy. A copy over its
// bound has its size (from a stat, or the bytes read when it grew while
// read) and no digest.
type measurement struct {
	started time.Time
	size    int64
	digest  string
	err     error
	// atLeast: the copy grew past its bound while read, and size is only
	// the bound plus one.
	atLeast bool
}

// errOverBound ends the reading of a copy at its bound.
var errOverBound = errors.New("the copy is larger than its bound")

// hashBurst is the largest read the budget grants at once.
const hashBurst = 1 << 20

func newHasher(d Disk, bytesPerSecond int64, timeout time.Duration, done func(), now func() time.Time) *hasher {
	return &hasher{disk: d, limiter: rate.NewLimiter(rate.Limit(bytesPerSecond), hashBurst), timeout: timeout, done: done, now: now,
		results: map[string]measurement{}, queued: map[string]int64{}}
}

// Result returns the latest measurement of key that started at or after
// notBefore, and true; or, when there is none, queues one (unless queued)
// and returns false. bound is the most bytes the copy may hold (-1: no
// bound): one larger is not read past it.
func (h *hasher) Result(key string, notBefore time.Time, bound int64) (measurement, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m, ok := h.results[key]; ok && !m.started.Before(notBefore) {
		return m, true
	}
	if _, waiting := h.queued[key]; !waiting {
		h.queued[key] = bound
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

// work measures the queued copies one after another, the smallest first.
func (h *hasher) work() {
	// Each waiting copy is sized once, when first seen: a folder walk per
	// copy, not one per copy for every copy measured before it.
	sizes := map[string]int64{}
	for {
		h.mu.Lock()
		if len(h.queued) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		waiting := maps.Clone(h.queued)
		h.mu.Unlock()

		key, size, err := h.smallest(waiting, sizes)
		delete(sizes, key)
		m := measurement{started: h.now(), size: size, err: err}
		if bound := waiting[key]; err == nil && (bound < 0 || size <= bound) {
			m = h.measure(key, bound)
		}

		h.mu.Lock()
		h.results[key] = m
		delete(h.queued, key)
		h.mu.Unlock()
		h.done()
	}
}

// smallest is the waiting copy whose files are the fewest bytes, by a stat
// (no file is read), and its size; a copy whose stat fails is taken first,
// with the error. sizes keeps what was stat'ed, by key.
func (h *hasher) smallest(waiting, sizes map[string]int64) (key string, size int64, err error) {
	size = -1
	for _, k := range slices.Sorted(maps.Keys(waiting)) {
		n, sized := sizes[k]
		if !sized {
			var statErr error
			if n, statErr = h.disk.Size(k); statErr != nil {
				return k, 0, statErr
			}
			sizes[k] = n
		}
		if size < 0 || n < size {
			key, size = k, n
		}
	}
	return key, size, nil
}

// measure reads and hashes a copy within the deadline and the budget,
// never past bound bytes (-1: no bound): a copy that grew past it while
// read is measured as the bytes read, with no digest.
func (h *hasher) measure(key string, bound int64) measurement {
	m := measurement{started: h.now()}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	left := bound
	m.size, m.digest, m.err = h.disk.measure(key, func(r io.Reader) io.Reader {
		r = &budgetReader{ctx: ctx, r: r, limiter: h.limiter}
		if bound < 0 {
			return r
		}
		return &boundedReader{r: r, left: &left}
	})
	if errors.Is(m.err, errOverBound) {
		m = measurement{started: m.started, size: bound + 1, atLeast: true}
	}
	return m
}

// boundedReader fails with errOverBound once more than *left bytes were
// read through it and the readers that share left.
type boundedReader struct {
	r    io.Reader
	left *int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if *b.left -= int64(n); *b.left < 0 {
		return n, errOverBound
	}
	return n, err
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
