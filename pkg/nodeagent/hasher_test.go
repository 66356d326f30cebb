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
	_, ok := h.Result("k", time.Time{})
	assert.False(t, ok, "queued, not measured on the caller's goroutine")
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the measure did not end")
	}
	took := time.Since(start)
	m, ok := h.Result("k", time.Time{})
	require.True(t, ok)
	require.NoError(t, m.err)
	assert.Equal(t, int64(3<<20), m.size)
	assert.GreaterOrEqual(t, took, 900*time.Millisecond, "3 MiB at 2 MiB/s (the first MiB is the burst)")
	_, ok = h.Result("k", time.Now())
	assert.False(t, ok, "a newer measure is queued")
}

// TestHasherDeadline: a measure that cannot finish within its deadline
// ends with an error, and the agent keeps what it knew.
func TestHasherDeadline(t *testing.T) {
	d := diskWith(t, "k", 8<<20)
	done := make(chan struct{}, 1)
	h := newHasher(d, 1<<20, 300*time.Millisecond, func() { done <- struct{}{} }, time.Now)
	h.Result("k", time.Time{})
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the measure did not end at its deadline")
	}
	m, ok := h.Result("k", time.Time{})
	require.True(t, ok)
	// The budget refuses a wait past the deadline at once.
	require.Error(t, m.err)
	assert.Contains(t, m.err.Error(), "context deadline")
}
