package migrate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
)

// goldenInputs are the KServe manifests under testdata, one per feature.
func goldenInputs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// goldenOptions are the options of a golden input: the mode-* inputs name
// the source's default mode (mode-serverless-*, mode-raw-*); the others come
// from a RawDeployment cluster, so that they show only their own feature.
func goldenOptions(base string) Options {
	if strings.HasPrefix(base, "mode-serverless") {
		return Options{DefaultMode: "Serverless"}
	}
	return Options{DefaultMode: "RawDeployment"}
}

func TestGolden(t *testing.T) {
	for _, in := range goldenInputs(t) {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			require.NoError(t, err)
			out, findings, err := File(filepath.Base(in), data, goldenOptions(filepath.Base(in)))
			require.NoError(t, err)
			base := strings.TrimSuffix(filepath.Base(in), ".yaml")
			golden.Check(t, base+".out", out)
			var report strings.Builder
			for _, f := range findings {
				report.WriteString(f.String() + "\n")
			}
			golden.Check(t, base+".findings", []byte(report.String()))
		})
	}
}

func TestNoPinProtocol(t *testing.T) {
	data, err := os.ReadFile("testdata/model-format.yaml")
	require.NoError(t, err)
	out, findings, err := File("model-format.yaml", data, Options{NoPinProtocol: true, DefaultMode: "RawDeployment"})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "protocolVersion: v1")
	require.Len(t, findings, 1)
	assert.Contains(t, findings[0].Message, "left unset, so Serval chooses a v2 runtime")
}

func TestRunExitCodesAndOutputs(t *testing.T) {
	var stdout, stderr strings.Builder
	code := Run(RunOptions{Files: []string{"testdata/comments.yaml", "testdata/transformer.yaml"}}, nil, &stdout, &stderr)
	assert.Equal(t, ExitOK, code, stderr.String())
	assert.Equal(t, 2, strings.Count(stdout.String(), "apiVersion: serving.serval.dev/v1beta1"))

	stdout.Reset()
	stderr.Reset()
	code = Run(RunOptions{Files: []string{"testdata/unsupported-fields.yaml"}}, nil, &stdout, &stderr)
	assert.Equal(t, ExitFindings, code)
	assert.NotEmpty(t, stdout.String(), "output written despite findings")
	assert.Contains(t, stderr.String(), "unsupported-fields.yaml: document 1 spec.predictor.logger.storage: cannot carry over: Forbidden: spec.predictor.logger.storage is not supported by Serval yet")

	stdout.Reset()
	stderr.Reset()
	code = Run(RunOptions{Files: []string{"testdata/unsupported-fields.yaml"}, Strict: true}, nil, &stdout, &stderr)
	assert.Equal(t, ExitError, code)
	assert.Empty(t, stdout.String(), "--strict writes nothing")

	stdout.Reset()
	stderr.Reset()
	code = Run(RunOptions{Files: []string{"-"}}, strings.NewReader("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\nspec: {predictor: {sklearn: {}}}\n"), &stdout, &stderr)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout.String(), "serving.serval.dev/v1beta1")

	code = Run(RunOptions{Files: []string{"testdata/missing.yaml"}}, nil, &stdout, &stderr)
	assert.Equal(t, ExitError, code)

	outDir := t.TempDir()
	code = Run(RunOptions{Files: []string{"testdata"}, OutDir: outDir}, nil, &stdout, &stderr)
	assert.Equal(t, ExitFindings, code, "the directory holds the unsupported cases")
	written, _ := filepath.Glob(filepath.Join(outDir, "*.yaml"))
	assert.Len(t, written, len(goldenInputs(t)), "one output file per input file")
}

func TestMalformedYAMLIsAnError(t *testing.T) {
	_, _, err := File("bad.yaml", []byte("apiVersion: serving.kserve.io/v1beta1\nkind: [unclosed\n"), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml: document 1")
}

// TestOneMalformedFileDoesNotStopTheOthers: in a directory, a file that does
// not parse is reported and skipped; the others are written; exit 2.
func TestOneMalformedFileDoesNotStopTheOthers(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(in, "a-bad.yaml"), []byte("kind: [unclosed\n"), 0o644))
	data, err := os.ReadFile("testdata/transformer.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in, "b-good.yaml"), data, 0o644))
	var stdout, stderr strings.Builder
	code := Run(RunOptions{Files: []string{in}, OutDir: out}, nil, &stdout, &stderr)
	assert.Equal(t, ExitFindings, code)
	assert.Contains(t, stderr.String(), "a-bad.yaml: cannot carry over: the file does not parse, so it is not written")
	assert.NoFileExists(t, filepath.Join(out, "a-bad.yaml"))
	assert.FileExists(t, filepath.Join(out, "b-good.yaml"))
}

// FuzzFile: no input makes the migration panic, and what it writes in
// place parses as the document it migrated: the same tree as encoding it
// whole would give.
func FuzzFile(f *testing.F) {
	f.Add([]byte("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec: {predictor: {onnx: {}}}\n"))
	f.Add([]byte("---\n---\nkind: x\n"))
	f.Add([]byte("apiVersion: \"serving.kserve.io/v1beta1\"   # c\nkind: InferenceService\nmetadata:\n    name: x\nspec:\n    predictor:\n" +
		"        model:\n            modelFormat: {name: onnx}\n            storageUri: 'gs://b/m'   # q\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := File("fuzz.yaml", data, Options{DefaultMode: "Serverless"})
		if err != nil {
			return
		}
		in, written := splitDocuments(data), splitDocuments(out)
		require.Len(t, written, len(in), "one document out for each in")
		for i, p := range written {
			var was, got any
			if yaml.Unmarshal(in[i].body, &was) != nil {
				continue // passed through as it was
			}
			if err := yaml.Unmarshal(p.body, &got); err != nil {
				t.Fatalf("document %d of the output does not parse: %v\n%s", i+1, err, out)
			}
			// A KServe kind Serval serves comes out in Serval's group.
			if m, ok := was.(map[string]any); ok && fmt.Sprint(m["apiVersion"]) == kserveGroup+"/"+servedKinds[fmt.Sprint(m["kind"])] {
				require.Equal(t, servalGroup+"/"+servedKinds[fmt.Sprint(m["kind"])], got.(map[string]any)["apiVersion"], "document %d\n%s", i+1, out)
			}
		}
	})
}

// TestPresetPrefix: serval migrate renames KServe's well-known presets to
// the names the controller looks up.
func TestPresetPrefix(t *testing.T) {
	assert.Equal(t, presets.Prefix, servalPresetPrefix)
}

// TestImplementedLLMFieldsAreNotFindings: a KServe LLMInferenceService that
// uses every field Serval implements (prefill and decode across nodes,
// scaling, KV cache offloading, rollout bounds, LoRA, tracing, managed DRA)
// and a preset with a pool are carried over with no finding that blocks:
// migrate asks the webhook's own rules, which accept them.
func TestImplementedLLMFieldsAreNotFindings(t *testing.T) {
	doc := `apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: llama
  annotations:
    serving.kserve.io/exp-dra-device-class: gpu.example.com
    serving.kserve.io/exp-dra-device-count: "2"
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-8B-Instruct
    lora:
      adapters:
      - {name: sql, uri: hf://org/sql-lora}
  worker: {containers: [{name: main}]}
  parallelism: {data: 4, dataLocal: 2}
  scaling:
    maxReplicas: 4
    wva: {hpa: {}}
  kvCacheOffloading:
    cpu: 20Gi
  rolloutStrategy: {maxUnavailable: 1}
  tracing: {}
  prefill:
    replicas: 2
    template: {containers: [{name: main}]}
  router:
    route: {}
    gateway: {}
    scheduler: {}
---
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata:
  name: pool-preset
spec:
  router:
    scheduler:
      pool:
        spec:
          selector: {matchLabels: {app.kubernetes.io/name: shared}}
          targetPorts: [{number: 8000}]
          endpointPickerRef: {name: shared-epp, port: {number: 9002}}
`
	_, findings, err := File("llm.yaml", []byte(doc), Options{DefaultMode: "RawDeployment"})
	require.NoError(t, err)
	for _, f := range findings {
		assert.False(t, f.Blocking, "a field Serval implements is no finding: %s", f)
	}
}

// TestShippedContainerSchemes: the schemes migrate takes as served are
// those of the ClusterStorageContainers Serval ships.
func TestShippedContainerSchemes(t *testing.T) {
	files, err := filepath.Glob("../../config/storagecontainers/*.yaml")
	require.NoError(t, err)
	shipped := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			if p, ok := strings.CutPrefix(strings.TrimSpace(line), "- prefix: "); ok {
				shipped[strings.TrimSuffix(p, "://")] = true
			}
		}
	}
	assert.Equal(t, shipped, shippedContainerSchemes)
}

// TestLayoutKept: the output is the input with only the changed lines
// changed: comments and their alignment, four-space indentation, a list
// one level in, quotes, flow mappings, blank lines and the separators'
// comments are kept byte for byte; new keys are indented as their
// neighbours.
func TestLayoutKept(t *testing.T) {
	in, err := os.ReadFile("testdata/layout-kept.yaml")
	require.NoError(t, err)
	out, _, err := File("layout-kept.yaml", in, Options{DefaultMode: "Serverless"})
	require.NoError(t, err)
	want := strings.NewReplacer(
		`apiVersion: "serving.kserve.io/v1beta1"   # aligned`, `apiVersion: "serving.serval.dev/v1beta1"   # aligned`,
		"        team: a          # who\n", "        team: a          # who\n    annotations:\n        serving.serval.dev/deploymentMode: Knative\n",
		"            storageUri: 'gs://b/m'   # quoted\n", "            storageUri: 'gs://b/m'   # quoted\n            protocolVersion: v1\n",
		"apiVersion: serving.kserve.io/v1beta1\n", "apiVersion: serving.serval.dev/v1beta1\n",
		"    serving.kserve.io/deploymentMode: RawDeployment   # old name", "    serving.serval.dev/deploymentMode: Standard   # old name",
		"      storageUri: gs://b/m\n", "      storageUri: gs://b/m\n      protocolVersion: v1\n",
	).Replace(string(in))
	assert.Equal(t, want, string(out))
}

// TestEveryGoldenKeepsItsLayout: in every golden output, each input line
// the migration did not change is there, in order: a comment, a blank
// line or an indentation lost shows up here.
func TestEveryGoldenKeepsItsLayout(t *testing.T) {
	for _, in := range goldenInputs(t) {
		base := filepath.Base(in)
		if base == "llm-v1alpha1.yaml" {
			continue // its InferencePool changes shape: encoded whole (see rewriteInPlace)
		}
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(in)
			require.NoError(t, err)
			out, _, err := File(base, data, goldenOptions(base))
			require.NoError(t, err)
			outLines := strings.Split(string(out), "\n")
			next := 0
			for _, line := range strings.Split(string(data), "\n") {
				if strings.Contains(line, kserveGroup) || strings.Contains(line, kserveNetworkPrefix) ||
					strings.Contains(line, "RawDeployment") || strings.Contains(line, "Serverless") || strings.Contains(line, kservePresetPrefix) {
					continue // a line the migration rewrites
				}
				i := slices.Index(outLines[next:], line)
				require.GreaterOrEqual(t, i, 0, "input line %q is not in the output, or out of order", line)
				next += i + 1
			}
		})
	}
}

// TestUnknownFieldIsAFinding: a misspelt field, which the webhook refuses
// with its path, is reported as admission would.
func TestUnknownFieldIsAFinding(t *testing.T) {
	doc := "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: typo}\n" +
		"spec:\n  predictor:\n    model:\n      modelFormat: {name: sklearn}\n      storageUri: gs://m/x\n      resources: {limits: {cpu: 1}}\n    minReplica: 2\n"
	_, findings, err := File("typo.yaml", []byte(doc), Options{DefaultMode: "RawDeployment"})
	require.NoError(t, err)
	require.Len(t, findings, 1)
	assert.True(t, findings[0].Blocking)
	assert.Equal(t, "spec.predictor.minReplica", findings[0].Path)
	assert.Contains(t, findings[0].Message, "unknown field; check its spelling and indentation: rejected at admission by Serval's InferenceService webhook")
}

// TestSchemaRefusalIsAFinding: a value the CRD's schema refuses (the API
// server checks it before any webhook) is reported with its path, as the
// API server would refuse it.
func TestSchemaRefusalIsAFinding(t *testing.T) {
	doc := "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\nmetadata: {name: negative}\n" +
		"spec:\n  model: {uri: hf://facebook/opt-125m}\n  replicas: -1\n"
	_, findings, err := File("negative.yaml", []byte(doc), Options{})
	require.NoError(t, err)
	var schema []Finding
	for _, f := range findings {
		if strings.Contains(f.Message, "CRD's schema") {
			schema = append(schema, f)
		}
	}
	require.Len(t, schema, 1, "%v", findings)
	assert.True(t, schema[0].Blocking)
	assert.Equal(t, "spec.replicas", schema[0].Path)
	assert.Contains(t, schema[0].Message, "spec.replicas in body should be greater than or equal to 0: rejected by the API server (the LLMInferenceService CRD's schema)")
}
