package routerbench_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/routerbench"
	"github.com/serval-dev/serval/internal/sandbox"
	"github.com/serval-dev/serval/internal/testenv"
)

// TestMain doubles as the backend process when asked to.
func TestMain(m *testing.M) {
	if addr := os.Getenv("ROUTERBENCH_BACKEND"); addr != "" {
		_ = routerbench.ServeBackend(addr)
		os.Exit(0)
	}
	if addrs := os.Getenv("ROUTERBENCH_PROXY"); addrs != "" {
		a, b, _ := strings.Cut(addrs, " ")
		_ = routerbench.ServeReverseProxy(a, b)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun runs the benchmark briefly, so that the harness cannot rot: every
// scenario is measured with no error and every figure is filled in. It
// asserts no timing.
func TestRun(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	bin, err := sandbox.BuildBinary(root, "./cmd/router", t.TempDir())
	require.NoError(t, err)

	backend := filepath.Join(t.TempDir(), "backend.sh")
	require.NoError(t, os.WriteFile(backend, []byte("#!/bin/sh\nROUTERBENCH_BACKEND=\"$1\" exec "+os.Args[0]+"\n"), 0o755))
	proxy := filepath.Join(t.TempDir(), "proxy.sh")
	require.NoError(t, os.WriteFile(proxy, []byte("#!/bin/sh\nROUTERBENCH_PROXY=\"$1 $2\" exec "+os.Args[0]+"\n"), 0o755))
	res, err := routerbench.Run(context.Background(), routerbench.Options{RouterBinary: bin, BackendCommand: []string{backend}, ProxyCommand: []string{proxy},
		Duration: 200 * time.Millisecond, Rounds: 1, RouterCPUs: 1})
	require.NoError(t, err)
	require.Len(t, res.Scenarios, 4)
	for _, s := range res.Scenarios {
		require.Len(t, s.Rounds, 1, s.Name)
		r := s.Rounds[0]
		for _, l := range []routerbench.LoadResult{r.Direct1, r.Routed1, r.Direct16, r.Routed16} {
			assert.Positive(t, l.Requests, s.Name)
			assert.Zero(t, l.Errors, s.Name)
		}
		assert.Positive(t, s.P50, s.Name)
		assert.Positive(t, s.PerSecond, s.Name)
		assert.Positive(t, s.ThroughputRatio, s.Name)
		if s.Name != routerbench.ReferenceScenario {
			assert.Positive(t, s.AllocsPerRequest, s.Name)
		}
	}
	var table bytes.Buffer
	routerbench.Print(&table, res)
	assert.Contains(t, table.String(), "Sequence, 1 step")
}
