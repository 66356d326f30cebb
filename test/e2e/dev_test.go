package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
)

// TestDevExitWhenReady runs `serval dev --exit-when-ready` as a user would
// script it: it exits 0 with the sample Ready and leaves no process and no
// directory behind.
func TestDevExitWhenReady(t *testing.T) {
	root, bin := buildServal(t)
	cmd := exec.Command(bin, "dev", "--exit-when-ready")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SERVAL_ROOT="+root)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "serval dev: %s", out)
	text := string(out)
	assert.Contains(t, text, "Applied sample sklearn: InferenceService default/sklearn-iris")
	assert.Contains(t, text, "Ready=True")
	assert.Contains(t, text, "URL: http://sklearn-iris-default.example.com")
	assert.Contains(t, text, "no model is actually loaded")
	assert.NotContains(t, text, "Explore the cluster", "a cluster that stops once the sample is Ready is not offered to explore")
	assert.NotContains(t, text, "log.SetLogger(...) was never called", "the manager has its logger")
	assert.NotContains(t, text, `"level":"info"`, "the manager's log stays quiet without -v")

	assertNothingLeft(t, text)
}

// TestDevStopsOnInterrupt runs `serval dev --no-sample` and interrupts it
// as Ctrl-C would: it exits 0 and leaves no process and no directory.
func TestDevStopsOnInterrupt(t *testing.T) {
	root, bin := buildServal(t)
	cmd := exec.Command(bin, "dev", "--no-sample", "-v")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SERVAL_ROOT="+root)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	waitFor(t, "serval dev to be up", func() bool { return strings.Contains(out.String(), "Press Ctrl-C to stop.") })
	assert.NotContains(t, out.String(), "Applied sample")
	assert.Regexp(t, `bin/kubectl --kubeconfig \S+/kubeconfig`, out.String(), "a cluster that stays up is offered to explore")
	// The console's address is printed, with its secret, and serves.
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32}`).FindString(out.String())
	require.NotEmpty(t, url, "the console's address: %s", out.String())
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Jar: jar}).Get(url) // the secret becomes a cookie, then a redirect
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "<h1>Services</h1>")
	waitFor(t, "-v to show the manager's log", func() bool { return strings.Contains(out.String(), `"msg":"Starting EventSource"`) })
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.NoError(t, cmd.Wait(), "serval dev after Ctrl-C: %s", out.String())
	assert.Contains(t, out.String(), "Stopping the local cluster...")
	assertNothingLeft(t, out.String())
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildServal builds cmd/serval once per test binary.
func buildServal(t *testing.T) (root, bin string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "serval-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "serval")
		build := exec.Command("go", "build", "-o", builtBin, "./cmd/serval")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%w: %s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return root, builtBin
}

// assertNothingLeft checks that the dev sandbox named in the output left no
// directory and no process behind.
func assertNothingLeft(t *testing.T, output string) {
	t.Helper()
	dir := regexp.MustCompile(`kubeconfig (\S+)/kubeconfig`).FindStringSubmatch(output)
	require.Len(t, dir, 2, output)
	_, err := os.Stat(dir[1])
	assert.True(t, os.IsNotExist(err), "the sandbox directory %s is removed", dir[1])
	for _, pid := range leftovers(t, dir[1]) {
		assert.False(t, sandbox.Alive(pid), "process %d of the dev sandbox still runs", pid)
	}
}

// syncBuffer is a bytes.Buffer safe for a writing process and a reading test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
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

// TestDevRefusesASampleThatCannotRun: a sample with nothing to follow is
// refused before any cluster starts, with the samples that run.
func TestDevRefusesASampleThatCannotRun(t *testing.T) {
	root, bin := buildServal(t)
	cmd := exec.Command(bin, "dev", "--sample", "inference-graph", "--exit-when-ready")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SERVAL_ROOT="+root)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	text := string(out)
	assert.Contains(t, text, `sample "inference-graph" cannot run: it has no InferenceService or LLMInferenceService to follow; the samples that run are: `)
	assert.Contains(t, text, "sklearn")
	assert.NotContains(t, text, "sandbox: starting", "no cluster was started")
}
