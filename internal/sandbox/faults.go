package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
)

// Process is a program the sandbox runs against the cluster as a process of
// its own (the Serval manager, say), so that it can be killed, paused and
// restarted like a real pod's container.
type Process struct {
	p *process
	// LogPath is the file with the process's output.
	LogPath string
}

// StartProcess runs bin with args, with KUBECONFIG set to the sandbox's admin
// kubeconfig, its output in LogDir/name.log (name must be unique per
// sandbox). Stop stops it with the sandbox.
func (s *Sandbox) StartProcess(name, bin string, args ...string) (*Process, error) {
	return s.StartProcessWithKubeconfig(name, s.KubeconfigPath, bin, args...)
}

// StartProcessWithKubeconfig is StartProcess with KUBECONFIG set to
// kubeconfig, such as one from ImpersonatingKubeconfig.
func (s *Sandbox) StartProcessWithKubeconfig(name, kubeconfig, bin string, args ...string) (*Process, error) {
	return s.startTracked(name, bin, args, []string{"KUBECONFIG=" + kubeconfig})
}

// StartProcessWithEnv is StartProcess with env (KEY=VALUE entries) added to
// the process's environment: GOGC for the manager alone, say, where setting
// it for the whole run would change the control plane too.
func (s *Sandbox) StartProcessWithEnv(name, bin string, env []string, args ...string) (*Process, error) {
	return s.startTracked(name, bin, args, append([]string{"KUBECONFIG=" + s.KubeconfigPath}, env...))
}

// startTracked starts a process that the sandbox stops, and its reaper kills,
// with the sandbox.
func (s *Sandbox) startTracked(name, bin string, args, env []string) (*Process, error) {
	p, err := startProcessEnv(name, bin, args, s.LogDir(), env)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	s.reaper.watchPID(p.cmd.Process.Pid)
	return &Process{p: p, LogPath: filepath.Join(s.LogDir(), name+".log")}, nil
}

// Kill ends the process with SIGKILL, as a crashed or evicted pod ends, and
// waits for it.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.p.done
}

// Terminate sends SIGTERM, as Kubernetes does to stop a pod, and waits up to
// grace for it to exit, then kills it.
func (p *Process) Terminate(grace time.Duration) { p.p.stop(grace) }

// Pause stops the process with SIGSTOP, as a frozen node or a long GC pause
// would; Resume continues it.
func (p *Process) Pause() error { return syscall.Kill(-p.p.cmd.Process.Pid, syscall.SIGSTOP) }

// Resume continues a paused process.
func (p *Process) Resume() error { return syscall.Kill(-p.p.cmd.Process.Pid, syscall.SIGCONT) }

// PID is the process's ID, for reading its figures from /proc.
func (p *Process) PID() int { return p.p.cmd.Process.Pid }

// APIServerPID is the ID of the running kube-apiserver process.
func (s *Sandbox) APIServerPID() (int, error) {
	pid, _, _, err := s.apiServerProcess()
	return pid, err
}

// ComponentPIDs are the IDs of the components the sandbox started itself
// (kube-controller-manager, kube-scheduler, kwok), by name; not those of
// StartProcess.
func (s *Sandbox) ComponentPIDs() map[string]int {
	pids := map[string]int{}
	for _, p := range s.procs {
		if p.component {
			pids[p.name] = p.cmd.Process.Pid
		}
	}
	return pids
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool { return p.p.exited() }

// Log returns what the process has written so far.
func (p *Process) Log() string {
	data, _ := os.ReadFile(p.LogPath)
	return string(data)
}

// RestartAPIServer kills kube-apiserver, waits down, and starts it again
// with the same arguments, on the same port, with the same certificates, as
// a restarted control-plane node would: clients keep their kubeconfig and
// must reconnect on their own. It returns when the new API server answers.
func (s *Sandbox) RestartAPIServer(ctx context.Context, down time.Duration) error {
	pid, args, env, err := s.apiServerProcess()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill kube-apiserver: %w", err)
	}
	for Alive(pid) {
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	p, err := startProcessEnv(fmt.Sprintf("kube-apiserver-restart-%d", time.Now().UnixNano()), args[0], args[1:], s.LogDir(), env)
	if err != nil {
		return err
	}
	s.restarted = append(s.restarted, p)
	s.reaper.watchPID(p.cmd.Process.Pid)
	s.apiServerPID = p.cmd.Process.Pid
	dc, err := discovery.NewDiscoveryClientForConfig(s.Env.Config)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := dc.ServerVersion(); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver did not answer within a minute of its restart; see %s", s.LogDir())
}

// apiServerProcess finds the running kube-apiserver and reads its command
// line and environment from /proc.
func (s *Sandbox) apiServerProcess() (int, []string, []string, error) {
	pid := s.apiServerPID
	if pid == 0 {
		for _, p := range s.envPIDs {
			if comm, _, err := procStat(p); err == nil && comm == "kube-apiserver" {
				pid = p
			}
		}
	}
	if pid == 0 || !Alive(pid) {
		return 0, nil, nil, fmt.Errorf("no running kube-apiserver")
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, nil, nil, err
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return 0, nil, nil, err
	}
	return pid, splitNUL(cmdline), splitNUL(environ), nil
}

func splitNUL(b []byte) []string {
	var out []string
	for _, part := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		out = append(out, string(part))
	}
	return out
}

// BuildBinary builds the Go package pkg (such as ./cmd/manager) of the
// repository at root into dir and returns the binary's path.
func BuildBinary(root, pkg, dir string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", pkg, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}
