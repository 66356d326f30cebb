package clustertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
)

// TestGoldenOutputsAcceptedByTheAPIServer creates every document of each
// golden output that has no blocking finding with a server-side dry run
// against Serval's CRDs.
func TestGoldenOutputsAcceptedByTheAPIServer(t *testing.T) {
	env, err := testenv.Start(testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	ins, err := filepath.Glob("../testdata/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".yaml")
		report, err := os.ReadFile(base + ".findings.golden")
		require.NoError(t, err)
		if bytes.Contains(report, []byte("cannot carry over")) {
			continue
		}
		out, err := os.ReadFile(base + ".out.golden")
		require.NoError(t, err)
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
		for i := 1; ; i++ {
			obj := &unstructured.Unstructured{}
			if err := dec.Decode(&obj.Object); err != nil {
				break
			}
			if obj.GetNamespace() == "" && obj.GetKind() != "ClusterServingRuntime" {
				obj.SetNamespace("default")
			}
			require.NoError(t, env.Client.Create(context.Background(), obj, client.DryRunAll),
				"%s document %d", filepath.Base(base)+".out.golden", i)
		}
	}
}
