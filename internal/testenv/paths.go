package testenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// modulePath is the Go module whose root holds bin/ and config/.
const modulePath = "github.com/serval-dev/serval"

// RepoRoot returns the root of the Serval source tree: $SERVAL_ROOT when set,
// else the nearest directory above the working directory whose go.mod declares
// Serval's module.
func RepoRoot() (string, error) {
	if root := os.Getenv("SERVAL_ROOT"); root != "" {
		return filepath.Abs(root)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isServalModule(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no Serval source tree above the working directory; set SERVAL_ROOT")
		}
		dir = parent
	}
}

func isServalModule(goMod []byte) bool {
	for _, line := range strings.Split(string(goMod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == modulePath
		}
	}
	return false
}

// BinDir returns the directory that holds the control-plane binaries:
// $SERVAL_BIN_DIR when set, else bin/ under the repository root. It fails with
// a hint when the binaries are missing.
func BinDir() (string, error) {
	dir := os.Getenv("SERVAL_BIN_DIR")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin")
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kubectl"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make controlplane` first", b, dir)
		}
	}
	return dir, nil
}

// upstreamCRDSources names, per upstream project, the module that ships its CRDs
// and the paths inside it. The versions are the ones Serval's go.mod pins.
var upstreamCRDSources = []struct {
	project Project
	module  string
	paths   []string
	// optIn: only UpstreamCRDPathsOf gives these, not UpstreamCRDPaths
	// (the chart's tests alone need them).
	optIn bool
}{
	{GatewayAPI, "sigs.k8s.io/gateway-api", []string{"config/crd/standard"}, false},
	{Knative, "knative.dev/serving", []string{"config/core/300-resources"}, false},
	{Istio, "istio.io/api", []string{"kubernetes/customresourcedefinitions.gen.yaml"}, false},
	{InferenceExtension, "sigs.k8s.io/gateway-api-inference-extension", []string{"config/crd/bases/inference.networking.k8s.io_inferencepools.yaml"}, false},
	// Serval imports no cert-manager code, so go.mod does not pin it: the
	// version is pinned here.
	{CertManager, "github.com/cert-manager/cert-manager@" + CertManagerVersion, []string{"deploy/crds"}, true},
	// KEDA's CRDs, of the release whose operator make controlplane builds
	// (go.mod requires the module for its external scaler's gRPC package
	// alone).
	{KEDA, "github.com/kedacore/keda/v2@" + KEDAVersion, []string{"config/crd/bases"}, true},
	// LeaderWorkerSet's CRD, for multi-node LLM workloads; Serval builds
	// LeaderWorkerSets as Unstructured and imports none of its code.
	{LWS, "sigs.k8s.io/lws@" + LWSVersion, []string{"config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"}, true},
	// The OpenTelemetry operator's collector CRD, for PodMetric triggers;
	// Serval imports none of its code.
	{OpenTelemetry, "github.com/open-telemetry/opentelemetry-operator@" + OpenTelemetryOperatorVersion,
		[]string{"config/crd/bases/opentelemetry.io_opentelemetrycollectors.yaml"}, true},
}

// OpenTelemetryOperatorVersion is the OpenTelemetry operator release whose
// OpenTelemetryCollector CRD the PodMetric tests install.
const OpenTelemetryOperatorVersion = "v0.129.1"

// LWSVersion is the LeaderWorkerSet release whose CRD the multi-node
// tests install.
const LWSVersion = "v0.8.0"

// KEDAVersion is the KEDA release whose CRDs the KEDA tests install and
// whose operator test/controlplane/build.sh builds (keep them equal).
const KEDAVersion = "v2.20.2"

// CertManagerVersion is the cert-manager release whose CRDs the chart's
// certificate objects are checked against.
const CertManagerVersion = "v1.19.1"

// Project names an upstream project whose CRDs tests install.
type Project string

// The upstream projects whose CRDs Serval's tests use.
const (
	GatewayAPI Project = "gateway-api"
	Knative    Project = "knative"
	Istio      Project = "istio"
	// InferenceExtension is the Gateway API Inference Extension
	// (InferencePool).
	InferenceExtension Project = "gateway-api-inference-extension"
	// CertManager's CRDs are opt-in: see UpstreamCRDPathsOf.
	CertManager Project = "cert-manager"
	// KEDA's ScaledObject CRD is opt-in too: tests install it late.
	KEDA Project = "keda"
	// LWS is LeaderWorkerSet's CRD, opt-in: tests install it late.
	LWS Project = "lws"
	// OpenTelemetry is the OpenTelemetry operator's collector CRD, opt-in.
	OpenTelemetry Project = "opentelemetry"
)

var (
	upstreamOnce      sync.Once
	upstreamPaths     []string
	upstreamByProject map[Project][]string
	upstreamErr       error
)

// UpstreamCRDPathsOf returns the files and directories that hold one
// project's CRDs: tests name the project rather than rely on the order of
// UpstreamCRDPaths.
func UpstreamCRDPathsOf(p Project) ([]string, error) {
	if _, err := UpstreamCRDPaths(); err != nil {
		return nil, err
	}
	paths, ok := upstreamByProject[p]
	if !ok {
		return nil, fmt.Errorf("no upstream CRDs for project %q", p)
	}
	return paths, nil
}

// UpstreamCRDPaths returns the files and directories that hold the upstream
// CRDs of Gateway API (standard channel), Knative Serving and Istio, in the
// module cache at the versions of Serval's go.mod, downloading them if needed.
func UpstreamCRDPaths() ([]string, error) {
	upstreamOnce.Do(func() { upstreamPaths, upstreamByProject, upstreamErr = resolveUpstreamCRDPaths() })
	return upstreamPaths, upstreamErr
}

func resolveUpstreamCRDPaths() ([]string, map[Project][]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	args := []string{"mod", "download", "-json"}
	for _, s := range upstreamCRDSources {
		args = append(args, s.module)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go mod download of the upstream CRD modules: %w: %s", err, stderr.String())
	}
	dirs := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); err != nil {
			return nil, nil, fmt.Errorf("decode go mod download output: %w", err)
		}
		if m.Error != "" {
			return nil, nil, fmt.Errorf("download %s: %s", m.Path, m.Error)
		}
		dirs[m.Path] = m.Dir
		dirs[m.Path+"@"+m.Version] = m.Dir
	}
	var paths []string
	byProject := map[Project][]string{}
	for _, s := range upstreamCRDSources {
		for _, p := range s.paths {
			full := filepath.Join(dirs[s.module], p)
			if _, err := os.Stat(full); err != nil {
				return nil, nil, fmt.Errorf("upstream CRDs of %s: %w", s.module, err)
			}
			if !s.optIn {
				paths = append(paths, full)
			}
			byProject[s.project] = append(byProject[s.project], full)
		}
	}
	return paths, byProject, nil
}
