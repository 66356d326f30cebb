package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane component the sandbox started itself.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	// component: one of the cluster's own (startComponents).
	component bool
}

// startProcess runs bin with args in a process group of its own, its output
// in logDir/name.log.
func startProcess(name, bin string, args []string, logDir string) (*process, error) {
	return startProcessEnv(name, bin, args, logDir, nil)
}

// startProcessEnv is startProcess with env added to this process's
// environment (nil: inherited as it is).
func startProcessEnv(name, bin string, args []string, logDir string, env []string) (*process, error) {
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// childPIDs returns the PIDs of this process's direct children whose command
// name is one of names. envtest starts etcd and kube-apiserver without telling
// their PIDs, so the sandbox finds them here to hand them to the reaper.
func childPIDs(names ...string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ppid, err := procStat(pid)
		if err != nil || ppid != self {
			continue
		}
		for _, n := range names {
			if comm == n || len(n) > 15 && comm == n[:15] {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// newPIDs returns the PIDs in after that are not in before.
func newPIDs(before, after []int) []int {
	old := map[int]bool{}
	for _, pid := range before {
		old[pid] = true
	}
	var fresh []int
	for _, pid := range after {
		if !old[pid] {
			fresh = append(fresh, pid)
		}
	}
	return fresh
}

// procStat returns the command name and parent PID of pid from /proc.
// Linux truncates the command name to 15 characters.
func procStat(pid int) (comm string, ppid int, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, errors.New("malformed stat")
	}
	fields := strings.Fields(s[closing+1:])
	if len(fields) < 2 {
		return "", 0, errors.New("malformed stat")
	}
	ppid, err = strconv.Atoi(fields[1])
	return s[open+1 : closing], ppid, err
}

// Alive reports whether pid names a running (not zombie) process.
func Alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	closing := strings.LastIndexByte(s, ')')
	fields := strings.Fields(s[closing+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
