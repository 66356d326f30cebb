package bench

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadMemory reads the test process's own memory: its peak is at least
// what files back now, and a Go binary has pages of its own resident; a
// process that is gone is an error, not zero.
func TestReadMemory(t *testing.T) {
	m, err := readMemory(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, m.File, "the binary's pages")
	assert.GreaterOrEqual(t, m.Peak, m.File)

	_, err = readMemory(-1)
	assert.Error(t, err, "no such process")
}
