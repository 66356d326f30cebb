package bench

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/serval-dev/serval/internal/sandbox"
)

// clockTicks is the kernel's USER_HZ, the unit of CPU times in /proc: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// cpuSeconds is the user and system CPU time pid has used.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	closing := strings.LastIndexByte(s, ')')
	if closing < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	// After "pid (comm) ": state is field 3; utime and stime are 14 and 15.
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return (utime + stime) / clockTicks, nil
}

// memory is a process's resident memory, in MiB, from /proc/PID/status.
type memory struct {
	// Peak is the highest resident set size the process has had (VmHWM).
	Peak float64
	// File is the resident memory backed by files now (RssFile): for a Go
	// program, the pages of its own binary that it has touched.
	File float64
}

// readMemory reads pid's resident memory.
func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	fields := map[string]*float64{"VmHWM:": &m.Peak, "RssFile:": &m.File}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), "\t")
		dst, ok := fields[name]
		if !ok {
			continue
		}
		kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return memory{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, name, err)
		}
		*dst = kib / 1024
		found++
	}
	if err := sc.Err(); err != nil {
		return memory{}, err
	}
	if found != len(fields) {
		return memory{}, fmt.Errorf("no VmHWM or RssFile in /proc/%d/status", pid)
	}
	return m, nil
}

// spanCPU measures the CPU of the cluster's processes over a span: the API
// server's, and as a control that of the components that do the same work
// whether Serval runs or not (the controller-manager's Deployments and
// ReplicaSets, the scheduler's and kwok's pods). Two runs of the same work
// differ in that control by how fast the machine was at the time, and by how
// much other work shared its cores.
type spanCPU struct {
	apiPID         int
	componentPIDs  []int
	api, component float64
}

// startSpanCPU reads the processes' CPU now.
func startSpanCPU(sb *sandbox.Sandbox) (*spanCPU, error) {
	apiPID, err := sb.APIServerPID()
	if err != nil {
		return nil, err
	}
	s := &spanCPU{apiPID: apiPID, componentPIDs: slices.Collect(maps.Values(sb.ComponentPIDs()))}
	s.api, s.component, err = s.read()
	return s, err
}

func (s *spanCPU) read() (api, component float64, err error) {
	if api, err = cpuSeconds(s.apiPID); err != nil {
		return 0, 0, err
	}
	for _, pid := range s.componentPIDs {
		c, err := cpuSeconds(pid)
		if err != nil {
			return 0, 0, err
		}
		component += c
	}
	return api, component, nil
}

// since returns the CPU seconds used since startSpanCPU: the API server's
// and the components'.
func (s *spanCPU) since() (api, component float64, err error) {
	api, component, err = s.read()
	return api - s.api, component - s.component, err
}
