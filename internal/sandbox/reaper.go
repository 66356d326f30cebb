package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// reaperEnv marks the re-run executable as the sandbox's reaper.
const reaperEnv = "SERVAL_SANDBOX_REAPER"

// init turns the process into the reaper when the sandbox re-runs its own
// executable for that purpose; it does nothing in any other process. It must run
// before main or TestMain so that the reaper never executes the program itself.
func init() {
	if os.Getenv(reaperEnv) == "1" {
		os.Exit(runReaper(os.Stdin))
	}
}

// runReaper reads "pid N" and "dir PATH" lines until "done" (a clean stop: exit
// quietly) or end of input (the parent died: kill every process group it
// named and remove every directory).
func runReaper(in io.Reader) int {
	var pids []int
	var dirs []string
	scanner := bufio.NewScanner(in)
	for scanner.Scan() {
		kind, arg, _ := strings.Cut(scanner.Text(), " ")
		switch kind {
		case "done":
			return 0
		case "pid":
			if pid, err := strconv.Atoi(arg); err == nil {
				pids = append(pids, pid)
			}
		case "dir":
			dirs = append(dirs, arg)
		}
	}
	for _, pid := range pids {
		// The sandbox starts each process in a group of its own, so the group
		// takes any children with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, dir := range dirs {
		_ = os.RemoveAll(dir)
	}
	return 0
}

// reaper is the parent's handle on the reaper process.
type reaper struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
}

// startReaper re-runs the current executable as the reaper.
func startReaper() (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the reaper: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	// A group of its own: a Ctrl-C to the terminal's foreground group must not
	// kill the reaper before it has cleaned up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	return &reaper{cmd: cmd, in: in}, nil
}

func (r *reaper) send(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in != nil {
		_, _ = io.WriteString(r.in, line+"\n")
	}
}

// watchPID asks the reaper to kill pid's process group if the parent dies.
func (r *reaper) watchPID(pid int) { r.send("pid " + strconv.Itoa(pid)) }

// watchDir asks the reaper to remove dir if the parent dies.
func (r *reaper) watchDir(dir string) { r.send("dir " + dir) }

// release ends the reaper after a clean stop, without it killing anything.
func (r *reaper) release() {
	r.send("done")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in != nil {
		_ = r.in.Close()
		r.in = nil
		_ = r.cmd.Wait()
	}
}
