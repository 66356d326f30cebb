package nodeagent

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMeasureReadsOnlyRegularFiles: a FIFO in a model's folder fails the
// measure at once, naming it, where opening it would block for ever; the
// size of the regular files is counted without reading them.
func TestMeasureReadsOnlyRegularFiles(t *testing.T) {
	d := Disk{Root: t.TempDir()}
	dir := d.dir("k")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "weights"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "weights", "a.bin"), make([]byte, 1000), 0o644))
	size, digest, err := d.Measure("k")
	require.NoError(t, err)
	assert.Equal(t, int64(1002), size)
	assert.Len(t, digest, 64)
	n, err := d.Size("k")
	require.NoError(t, err)
	assert.Equal(t, int64(1002), n)

	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "weights", "pipe"), 0o644))
	done := make(chan error, 1)
	go func() { _, _, err := d.Measure("k"); done <- err }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Measure blocked on a FIFO")
	}
	var irregular *IrregularFileError
	require.True(t, errors.As(err, &irregular), "got %v", err)
	assert.Equal(t, "weights/pipe is a named pipe, not a regular file: a model's folder holds only files, folders and links", err.Error())
}

// TestHashFileRefusesAFIFO: a path that is a FIFO when hashFile opens it
// (swapped in after the walk) is refused without blocking.
func TestHashFileRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	require.NoError(t, unix.Mkfifo(p, 0o644))
	_, err := hashFile(nil, p, func(r io.Reader) io.Reader { return r })
	var irregular *IrregularFileError
	assert.True(t, errors.As(err, &irregular), "got %v", err)
}
