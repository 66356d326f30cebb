package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/bench"
)

// TestBenchAtTen runs `serval bench` at N=10 so that the harness cannot rot:
// the JSON it writes has every figure, and the idle manager writes nothing.
// It checks no timing: figures are measured, not asserted.
func TestBenchAtTen(t *testing.T) {
	res, err := bench.Run(context.Background(), bench.Options{N: 10, IdleWindow: 10 * time.Second, Progress: testWriter{t}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "bench.json")
	data, err := json.MarshalIndent(res, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	t.Logf("%s", data)

	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	for _, path := range [][]string{
		{"n"}, {"workers"}, {"machine", "cpus"},
		{"ratioToFloor", "p50Seconds"}, {"ratioToFloor", "p90Seconds"}, {"ratioToFloor", "p100Seconds"},
		{"floor", "ready", "p100Seconds"}, {"floor", "objectsPerISVC"}, {"floor", "apiServerCPUSeconds"}, {"floor", "componentsCPUSeconds"},
		{"serval", "ready", "p50Seconds"}, {"serval", "ready", "p90Seconds"}, {"serval", "ready", "p100Seconds"},
		{"serval", "managerPeakRSSMiB"}, {"serval", "managerFileRSSMiB"}, {"serval", "managerLiveHeapMiB"}, {"serval", "managerCPUSeconds"}, {"serval", "apiServerCPUSeconds"},
		{"serval", "componentsCPUSeconds"}, {"serval", "totalRequestsPerISVC"}, {"serval", "writesPerISVC"}, {"serval", "reconciles"},
		{"serval", "reconcileP50Ms"}, {"serval", "reconcileP99Ms"},
	} {
		v, ok := lookup(doc, path)
		if assert.True(t, ok, "%v missing", path) {
			n, isNumber := v.(float64)
			assert.True(t, isNumber && n > 0, "%v = %v, want a positive figure", path, v)
		}
	}
	goVersion, _ := lookup(doc, []string{"machine", "go"})
	assert.NotEmpty(t, goVersion, "the machine described")
	requests, _ := lookup(doc, []string{"serval", "requestsPerISVC"})
	assert.NotEmpty(t, requests, "requests by verb")
	idleWrites, ok := lookup(doc, []string{"serval", "idleWrites"})
	require.True(t, ok, "idleWrites missing")
	assert.Zero(t, idleWrites, "the idle manager writes nothing: %v", res.Serval.IdleByVerbAndResource)
	assert.Equal(t, 5.0, res.Floor.ObjectsPerISVC, "the InferenceService, its Deployment, Service, HPA and Ingress")
}

// TestBenchRounds runs two short rounds without the floor: each round is a
// run of its own, in a directory of its own, and the result is one of them.
// The environment given for the manager reaches the manager alone: Go's
// init trace, asked for there, is in its log and in no other.
func TestBenchRounds(t *testing.T) {
	dir := t.TempDir()
	res, err := bench.Run(context.Background(), bench.Options{N: 2, Rounds: 2, SkipFloor: true, IdleWindow: 2 * time.Second,
		ManagerEnv: []string{"GODEBUG=inittrace=1"}, Dir: dir, Progress: testWriter{t}})
	require.NoError(t, err)
	require.Len(t, res.Rounds, 2)
	assert.Contains(t, []int{1, 2}, res.MedianRound)
	assert.Same(t, res.Rounds[res.MedianRound-1].Serval, res.Serval, "the result is the median round")
	assert.Nil(t, res.Floor)
	for _, round := range []string{"round-1", "round-2"} {
		assert.FileExists(t, filepath.Join(dir, round, "serval", "logs", "manager.log"), "each round keeps its logs")
	}
	assert.Equal(t, []string{"GODEBUG=inittrace=1"}, res.Serval.ManagerEnv)
	logs, err := filepath.Glob(filepath.Join(dir, "round-1", "serval", "logs", "*.log"))
	require.NoError(t, err)
	for _, log := range logs {
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		traced := strings.Contains(string(data), "init runtime @")
		assert.Equal(t, filepath.Base(log) == "manager.log", traced, "Go's init trace in %s", filepath.Base(log))
	}
}

// TestBenchRefusesAMalformedEnvironment: an entry that is not KEY=VALUE is
// refused before any cluster starts.
func TestBenchRefusesAMalformedEnvironment(t *testing.T) {
	for _, entry := range []string{"GOGC", "=50", ""} {
		_, err := bench.Run(context.Background(), bench.Options{N: 1, ManagerEnv: []string{entry}, Progress: testWriter{t}})
		assert.ErrorContains(t, err, "KEY=VALUE", "%q", entry)
	}
}

func lookup(doc map[string]any, path []string) (any, bool) {
	var v any = doc
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
