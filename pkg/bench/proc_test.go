package bench

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadMemory reads the test process's own memory: its peak is at least
// what files back now, and a Go binary has pages of its own resident.
func TestReadMemory(t *testing.T) {
	m, err := readMemory(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, m.File, "the binary's pages")
	assert.GreaterOrEqual(t, m.Peak, m.File)

	cpu, err := cpuSeconds(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cpu, 0.0)

	_, err = readMemory(-1)
	assert.Error(t, err, "no such process")
}
