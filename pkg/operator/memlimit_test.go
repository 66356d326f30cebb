package operator

import (
	"math"
	"runtime/debug"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
)

func TestContainerMemoryLimit(t *testing.T) {
	for _, tt := range []struct {
		name   string
		files  fstest.MapFS
		want   int64
		wantOK bool
	}{
		{"cgroup v2 limit", fstest.MapFS{"memory.max": {Data: []byte("536870912\n")}}, 536870912, true},
		{"cgroup v2 without a limit", fstest.MapFS{"memory.max": {Data: []byte("max\n")}}, 0, false},
		{"cgroup v1 limit", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("268435456\n")}}, 268435456, true},
		{"cgroup v1 without a limit", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 0, false},
		{"no cgroup files (not in a container)", fstest.MapFS{}, 0, false},
		{"garbage", fstest.MapFS{"memory.max": {Data: []byte("lots")}}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := containerMemoryLimit(tt.files)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSetMemoryLimitRefusesABadRatio(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	_, err := SetMemoryLimit(1.5)
	assert.ErrorContains(t, err, "between 0 and 1")
	soft, err := SetMemoryLimit(0)
	assert.NoError(t, err)
	assert.Zero(t, soft, "0 disables")
}

func TestSetMemoryLimitLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "100MiB")
	soft, err := SetMemoryLimit(0.9)
	assert.NoError(t, err)
	assert.Zero(t, soft, "GOMEMLIMIT wins")
}

func TestSetMemoryLimitFromTheContainer(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	soft, err := setMemoryLimit(0.9, fstest.MapFS{"memory.max": {Data: []byte("536870912\n")}})
	assert.NoError(t, err)
	assert.Equal(t, int64(483183820), soft, "90% of 512 MiB")
	assert.Equal(t, soft, debug.SetMemoryLimit(-1), "the runtime's limit")

	debug.SetMemoryLimit(math.MaxInt64)
	soft, err = setMemoryLimit(0.9, fstest.MapFS{"memory.max": {Data: []byte("max\n")}})
	assert.NoError(t, err)
	assert.Zero(t, soft, "no limit, nothing set")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}
