package operator

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultMemoryLimitRatio is the share of the container's memory limit the
// Go runtime's soft limit is set to by default. Go collects garbage when the
// heap has doubled since the last collection, whatever the container's
// limit: a manager whose live heap nears half the limit would be killed for
// memory it could have collected, and again after each restart. With a soft
// limit, the collector runs more often as the heap nears it instead; the
// tenth left over is for what the runtime does not count (the binary's
// mapped pages).
const DefaultMemoryLimitRatio = 0.9

// unlimited is the threshold above which cgroup v1 reports no limit (it
// writes the largest page-aligned int64).
const unlimited = int64(1) << 60

// containerMemoryLimit reads the memory limit of the cgroup the process runs
// in, from cgroupfs (mounted at /sys/fs/cgroup): cgroup v2's memory.max or
// cgroup v1's memory.limit_in_bytes. It reports false when there is no limit
// or no cgroup file to read.
func containerMemoryLimit(cgroupfs fs.FS) (int64, bool) {
	for _, name := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		data, err := fs.ReadFile(cgroupfs, name)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= unlimited {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// SetMemoryLimit sets the Go runtime's soft memory limit to ratio of the
// container's memory limit and returns it; 0 when it sets nothing: GOMEMLIMIT
// is set (the runtime has applied it), ratio is not in (0, 1], or the
// container has no limit.
func SetMemoryLimit(ratio float64) (int64, error) {
	return setMemoryLimit(ratio, os.DirFS("/sys/fs/cgroup"))
}

func setMemoryLimit(ratio float64, cgroupfs fs.FS) (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	if ratio < 0 || ratio > 1 || math.IsNaN(ratio) {
		return 0, errors.New("the memory limit ratio must be between 0 and 1")
	}
	if ratio == 0 {
		return 0, nil
	}
	limit, ok := containerMemoryLimit(cgroupfs)
	if !ok {
		return 0, nil
	}
	soft := int64(float64(limit) * ratio)
	debug.SetMemoryLimit(soft)
	return soft, nil
}
