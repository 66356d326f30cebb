package runtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// loadDefaultRuntimes reads the ClusterServingRuntimes Serval ships.
func loadDefaultRuntimes(t *testing.T) []Runtime {
	t.Helper()
	files, err := filepath.Glob("../../config/runtimes/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []Runtime
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		csr := &v1alpha1.ClusterServingRuntime{}
		require.NoError(t, yaml.UnmarshalStrict(data, csr), f)
		require.Empty(t, v1alpha1.ValidateSpec(&csr.Spec), f)
		out = append(out, FromClusterServingRuntime(csr))
	}
	return out
}

// TestDefaultRuntimeTable is the table docs/runtimes.md shows: for each model
// format and protocol ("" = none given), the runtime and protocol selected
// from the shipped runtimes, or "" when none serves it.
func TestDefaultRuntimeTable(t *testing.T) {
	runtimes := loadDefaultRuntimes(t)
	protocols := []v1beta1.Protocol{"", v1beta1.ProtocolV1, v1beta1.ProtocolV2, v1beta1.ProtocolGRPCV1, v1beta1.ProtocolGRPCV2}
	const (
		sk, xgb, lgb, pmml, paddle = "kserve-sklearnserver", "kserve-xgbserver", "kserve-lgbserver", "kserve-pmmlserver", "kserve-paddleserver"
		mls, tfs, ts, triton, hf   = "kserve-mlserver", "kserve-tensorflow-serving", "kserve-torchserve", "kserve-tritonserver", "kserve-huggingfaceserver"
	)
	// Each row: the selection for no protocol, v1, v2, grpc-v1, grpc-v2.
	want := map[string][5]string{
		"sklearn":     {sk + "/v1", sk, mls, "", mls},
		"xgboost":     {xgb + "/v1", xgb, mls, "", mls},
		"lightgbm":    {lgb + "/v1", lgb, mls, "", mls},
		"pmml":        {pmml + "/v1", pmml, pmml, "", ""},
		"paddle":      {paddle + "/v1", paddle, paddle, "", ""},
		"mlflow":      {mls + "/v2", "", mls, "", mls},
		"tensorflow":  {tfs + "/v1", tfs, triton, tfs, triton},
		"pytorch":     {ts + "/v1", ts, ts, "", ts},
		"onnx":        {triton + "/v2", "", triton, "", triton},
		"tensorrt":    {triton + "/v2", "", triton, "", triton},
		"triton":      {triton + "/v2", "", triton, "", triton},
		"huggingface": {hf + "/v1", hf, hf, "", ""},
	}
	for format, row := range want {
		for i, p := range protocols {
			req := Request{ModelFormat: v1beta1.ModelFormat{Name: format}}
			if p != "" {
				req.Protocol = &p
			}
			sel, err := Select(req, runtimes)
			got := ""
			if err == nil {
				got = sel.Runtime.Name
				if p == "" {
					got += "/" + string(sel.Protocol)
				}
			}
			assert.Equal(t, row[i], got, "format %s, protocol %q", format, p)
		}
	}
}

// TestDefaultRuntimesAreUnambiguous: no two shipped runtimes offer the same
// format and version with the same priority and a shared protocol, so the
// ordering never falls back to age or name.
func TestDefaultRuntimesAreUnambiguous(t *testing.T) {
	type slot struct {
		format, version string
		priority        int32
		protocol        v1beta1.Protocol
	}
	seen := map[slot]string{}
	for _, r := range loadDefaultRuntimes(t) {
		for _, f := range r.Spec.SupportedModelFormats {
			if f.AutoSelect == nil || !*f.AutoSelect {
				continue
			}
			for _, p := range r.protocols() {
				s := slot{f.Name, *f.Version, priority(&f), p}
				if other, dup := seen[s]; dup {
					t.Errorf("%s and %s both offer %+v", other, r.Name, s)
				}
				seen[s] = r.Name
			}
		}
	}
}
