package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/serval-dev/serval/internal/testenv"
)

// kwokModule is the kwok release whose stage configs the sandbox uses; it
// matches the kwok binary that `make controlplane` builds.
const kwokModule = "sigs.k8s.io/kwok@v0.8.0"

// kwokStages are the stage configs shipped in the kwok module: nodes become
// Ready and keep a heartbeat, pods go Running at once and complete or delete.
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// startComponents starts kube-controller-manager, kube-scheduler and kwok.
func (s *Sandbox) startComponents() error {
	bin, err := testenv.BinDir()
	if err != nil {
		return err
	}
	stages, err := kwokStageFiles()
	if err != nil {
		return err
	}
	kc := "--kubeconfig=" + s.KubeconfigPath
	components := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", append([]string{kc, "--controllers=" + s.opts.Controllers,
			"--use-service-account-credentials=false", "--secure-port=0", "--leader-elect=false",
			// Kubelets do not exist, so pods would otherwise be evicted from
			// nodes whose heartbeat kwok keeps but never fully reports.
			"--node-monitor-grace-period=1h"}, s.opts.ControllerManagerFlags...)},
		{"kube-scheduler", []string{kc, "--secure-port=0", "--leader-elect=false"}},
		{"kwok", []string{kc, "--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + nodeAnnotation + "=fake",
			"--config=" + strings.Join(stages, ",")}},
	}
	for _, c := range components {
		s.progress("starting %s", c.name)
		p, err := startProcess(c.name, filepath.Join(bin, c.name), c.args, s.LogDir())
		if err != nil {
			return err
		}
		p.component = true
		s.procs = append(s.procs, p)
		s.reaper.watchPID(p.cmd.Process.Pid)
	}
	// A component that dies at once (a bad flag, a missing binary) is reported
	// here rather than as a cluster that never gets Ready.
	time.Sleep(300 * time.Millisecond)
	for _, p := range s.procs {
		if p.exited() {
			return fmt.Errorf("%s exited at start; see %s", p.name, filepath.Join(s.LogDir(), p.name+".log"))
		}
	}
	return nil
}

// kwokStageFiles returns the absolute paths of the kwok stage configs in the
// module cache, downloading the module if needed.
func kwokStageFiles() ([]string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", kwokModule).Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s: %w", kwokModule, err)
	}
	var m struct{ Dir, Error string }
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&m); err != nil || m.Error != "" {
		return nil, fmt.Errorf("locate %s: %v %s", kwokModule, err, m.Error)
	}
	files := make([]string, len(kwokStages))
	for i, s := range kwokStages {
		files[i] = filepath.Join(m.Dir, s)
	}
	return files, nil
}
