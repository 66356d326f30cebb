package nodeagent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func diskWith(t *testing.T, key string, size int) Disk {
	t.Helper()
	d := Disk{Root: t.TempDir()}
	require.NoError(t, os.MkdirAll(d.dir(key), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d.dir(key), "weights.bin"), make([]byte, size), 0o644))
	return d
}

// TestHasherMeasuresOffTheCallerWithinItsBudget: Result returns at once
// and queues the measure; the measure reads within the byte budget, ends
// by calling done, and is then Result's answer until a newer one is asked
// for.
func TestHasherMeasuresOffTheCallerWithinItsBudget(t *testing.T) {
	d := diskWith(t, "k", 3<<20)
	done := make(chan struct{}, 4)
	h := newHasher(d, 2<<20, time.Minute, func() { done <- struct{}{} }, time.Now)
	start := time.Now()
	_, ok := h.Result("k", time.Time{}, -1)
	assert.False(t, ok, "queued, not measured on the caller's goroutine")
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the measure did not end")
	}
	took := time.Since(start)
	m, ok := h.Result("k", time.Time{}, -1)
	require.True(t, ok)
	require.NoError(t, m.err)
	assert.Equal(t, int64(3<<20), m.size)
	assert.GreaterOrEqual(t, took, 900*time.Millisecond, "3 MiB at 2 MiB/s (the first MiB is the burst)")
	_, ok = h.Result("k", time.Now(), -1)
	assert.False(t, ok, "a newer measure is queued")
}

// TestHasherDeadline: a measure that cannot finish within its deadline
// ends with an error, and the agent keeps what it knew.
func TestHasherDeadline(t *testing.T) {
	d := diskWith(t, "k", 8<<20)
	done := make(chan struct{}, 1)
	h := newHasher(d, 1<<20, 300*time.Millisecond, func() { done <- struct{}{} }, time.Now)
	h.Result("k", time.Time{}, -1)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the measure did not end at its deadline")
	}
	m, ok := h.Result("k", time.Time{}, -1)
	require.True(t, ok)
	// The budget refuses a wait past the deadline at once.
	require.Error(t, m.err)
	assert.Contains(t, m.err.Error(), "context deadline")
}

// TestHasherSizesBeforeItReads: a copy larger than its bound is measured
// by a stat, without a byte read (here the budget would take minutes to
// read it); a copy that fits is hashed; and the smallest waiting copy is
// measured first, so that a large one never holds up small ones queued
// behind it.
func TestHasherSizesBeforeItReads(t *testing.T) {
	d := diskWith(t, "tenant", 64<<20)
	require.NoError(t, os.MkdirAll(d.dir("admin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d.dir("admin"), "weights.bin"), make([]byte, 1<<20), 0o644))
	order := make(chan string, 4)
	var h *hasher
	h = newHasher(d, 256<<10, time.Minute, func() {}, time.Now)
	h.done = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for k := range h.results {
			order <- k
			delete(h.results, k)
		}
	}
	h.mu.Lock() // both queued before the worker looks
	h.queued["tenant"], h.queued["admin"] = 1<<20, -1
	h.running = true
	h.mu.Unlock()
	start := time.Now()
	go h.work()
	first, second := <-order, <-order
	assert.Equal(t, []string{"admin", "tenant"}, []string{first, second}, "the smaller copy first")
	assert.Less(t, time.Since(start), 30*time.Second, "64 MiB at 256 KiB/s would take minutes: the tenant's copy was not read")

	m := h.measure("tenant", 1<<20)
	assert.Equal(t, int64(1<<20+1), m.size, "a copy read past its bound is over it")
	assert.Empty(t, m.digest)
	require.NoError(t, m.err)
}
