package router_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// routerProcess runs cmd/router, built from this checkout, with a graph
// and flags; it returns its address and process.
func routerProcess(t *testing.T, graphJSON string, env []string, args ...string) (string, *os.Process) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the router binary: make test runs it, make test-unit (-short) does not")
	}
	bin := filepath.Join(t.TempDir(), "router")
	build := exec.Command("go", "build", "-o", bin, "github.com/serval-dev/serval/cmd/router")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(bin, append([]string{"--graph-json=" + graphJSON, "--addr=" + addr, "--metrics-addr=0", "--drain-delay=0s"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == 200
	}, 10*time.Second, 20*time.Millisecond)
	return addr, cmd.Process
}

// peakRSS is a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, p *os.Process) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// zeros is an endless body of zeros; limited, a body of a given size that
// costs the sender no memory.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestHugeBodyMemory: a 600 MB request to a Switch and to an Ensemble node,
// with its length announced and sent chunked, is answered 413, and the
// router's peak resident memory stays under 150 MB.
func TestHugeBodyMemory(t *testing.T) {
	backend := newRecorder(t)
	for _, typ := range []string{"Switch", "Ensemble"} {
		t.Run(typ, func(t *testing.T) {
			graphJSON := `{"nodes":{"root":{"routerType":"` + typ + `","steps":[{"name":"a","serviceUrl":"` + backend.URL + `"}]}}}`
			addr, p := routerProcess(t, graphJSON, nil)
			for _, chunked := range []bool{false, true} {
				var body io.Reader = io.LimitReader(zeros{}, 600<<20)
				req, err := http.NewRequest(http.MethodPost, "http://"+addr, body)
				require.NoError(t, err)
				if !chunked {
					req.ContentLength = 600 << 20
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				data, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "chunked=%v: %s", chunked, data)
			}
			assert.Empty(t, backend.settle(t))
			rss := peakRSS(t, p)
			t.Logf("%s: the router's peak RSS %d MiB", typ, rss>>20)
			assert.Less(t, rss, int64(150<<20), "the router's peak resident memory")
		})
	}
}
