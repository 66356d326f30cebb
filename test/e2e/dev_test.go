package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/pkg/sandbox"
	"github.com/serval-dev/serval/pkg/testenv"
)

// TestDevExitWhenReady runs `serval dev --exit-when-ready` as a user would
// script it: it exits 0 with the sample Ready and leaves no process and no
// directory behind.
func TestDevExitWhenReady(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "serval")
	build := exec.Command("go", "build", "-o", bin, "./cmd/serval")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	cmd := exec.Command(bin, "dev", "--exit-when-ready")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SERVAL_ROOT="+root)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "serval dev: %s", out)
	text := string(out)
	assert.Contains(t, text, "Applied sample sklearn: InferenceService default/sklearn-iris")
	assert.Contains(t, text, "Ready=True")
	assert.Contains(t, text, "URL: http://sklearn-iris-default.example.com")
	assert.Contains(t, text, "no model is actually loaded")
	assert.Regexp(t, `bin/kubectl --kubeconfig \S+/kubeconfig`, text)

	dir := regexp.MustCompile(`kubeconfig (\S+)/kubeconfig`).FindStringSubmatch(text)
	require.Len(t, dir, 2, text)
	_, err = os.Stat(dir[1])
	assert.True(t, os.IsNotExist(err), "the sandbox directory %s is removed", dir[1])
	for _, pid := range leftovers(t, dir[1]) {
		assert.False(t, sandbox.Alive(pid), "process %d of the dev sandbox still runs", pid)
	}
}

// leftovers returns the PIDs of processes whose command line mentions dir.
func leftovers(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(data), dir) {
			continue
		}
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
