package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/dev"
	"github.com/serval-dev/serval/pkg/testenv"
)

// TestEverySampleGoesReady applies every file of config/samples and waits
// for each InferenceService to be Ready; no Knative controller runs here, so
// the test writes the Knative Services' status as Knative would.
func TestEverySampleGoesReady(t *testing.T) {
	ctx := context.Background()
	const ns = "samples"
	require.NoError(t, sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "config/samples/*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		require.NoError(t, dev.ApplyFile(ctx, sb.Client, f, ns), f)
	}
	list := &v1beta1.InferenceServiceList{}
	require.NoError(t, sb.Client.List(ctx, list, client.InNamespace(ns)))
	require.GreaterOrEqual(t, len(list.Items), 18, "one InferenceService per sample")
	for _, isvc := range list.Items {
		t.Run(isvc.Name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: isvc.Name}
			if strings.EqualFold(isvc.Annotations[v1beta1.DeploymentModeAnnotation], "Knative") {
				playKnative(t, ns, isvc.Name+"-predictor")
			}
			waitFor(t, isvc.Name+" to be Ready", func() bool {
				got := &v1beta1.InferenceService{}
				return sb.Client.Get(ctx, key, got) == nil && meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionReady)
			})
		})
	}
}

// playKnative waits for the Knative Service and writes a Ready status.
func playKnative(t *testing.T, ns, name string) {
	t.Helper()
	ksvc := &unstructured.Unstructured{}
	ksvc.SetAPIVersion("serving.knative.dev/v1")
	ksvc.SetKind("Service")
	waitFor(t, "Knative Service "+name, func() bool {
		return sb.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, ksvc) == nil
	})
	ready := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	revision := name + "-00001"
	ksvc.Object["status"] = map[string]any{
		"observedGeneration": ksvc.GetGeneration(), "url": "http://" + name + "." + ns + ".example.com",
		"latestReadyRevisionName": revision, "latestCreatedRevisionName": revision,
		"conditions": []any{ready("Ready"), ready("ConfigurationsReady"), ready("RoutesReady")},
		"traffic":    []any{map[string]any{"revisionName": revision, "latestRevision": true, "percent": int64(100)}},
	}
	require.NoError(t, sb.Client.Status().Update(context.Background(), ksvc))
}
