package e2e

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/migrate"
)

// applyMigrated runs `serval migrate` on a KServe file and creates what it
// writes in ns.
func applyMigrated(t *testing.T, file, ns string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := migrate.Run(migrate.RunOptions{Files: []string{file}}, nil, &out, &errs)
	require.Equal(t, migrate.ExitOK, code, "serval migrate: %s", errs.String())
	dec := yaml.NewYAMLOrJSONDecoder(&out, 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		if len(obj.Object) == 0 {
			continue
		}
		obj.SetNamespace(ns)
		require.NoError(t, sb.Client.Create(context.Background(), obj), "create %s %s", obj.GetKind(), obj.GetName())
	}
}

// TestKServeRuntimesServeTheirSamples applies KServe's own sklearn,
// torchserve and mlserver runtimes, migrated, beside Serval's defaults (the
// webhook admits them), and a KServe sample on each: every one goes Ready on
// KServe's runtime, with the labels and env KServe's defaulting gives
// TorchServe and MLServer.
func TestKServeRuntimesServeTheirSamples(t *testing.T) {
	ctx := context.Background()
	const ns = "kserve-runtimes"
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	applyMigrated(t, "testdata/kserve-runtimes.yaml", ns)
	applyMigrated(t, "testdata/kserve-isvcs.yaml", ns)
	want := map[string]struct {
		runtime  string
		protocol v1beta1.Protocol
		env      map[string]string
	}{
		"sklearn-kserve":    {"kserve-sklearnserver", v1beta1.ProtocolV1, nil},
		"torchserve-kserve": {"kserve-torchserve", v1beta1.ProtocolV2, map[string]string{"TS_SERVICE_ENVELOPE": "kservev2", "PROTOCOL_VERSION": "v2"}},
		"xgboost-kserve": {"kserve-mlserver", v1beta1.ProtocolV2, map[string]string{"MLSERVER_MODEL_IMPLEMENTATION": "mlserver_xgboost.XGBoostModel",
			"MLSERVER_MODEL_NAME": "xgboost-kserve", "MLSERVER_MODEL_URI": "/mnt/models"}},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: name}
			isvc := &v1beta1.InferenceService{}
			waitFor(t, name+" to be Ready", func() bool {
				return sb.Client.Get(ctx, key, isvc) == nil && meta.IsStatusConditionTrue(isvc.Status.Conditions, v1beta1.ConditionReady)
			})
			assert.Equal(t, w.runtime, isvc.Status.ServingRuntimeName, "KServe's namespaced runtime, not Serval's cluster one")
			assert.Equal(t, w.protocol, isvc.Status.ProtocolVersion)
			dep := &appsv1.Deployment{}
			require.NoError(t, sb.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-predictor"}, dep))
			env := map[string]string{}
			for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			for k, v := range w.env {
				assert.Equal(t, v, env[k], "env %s", k)
			}
		})
	}
}
