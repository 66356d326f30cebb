package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestScaleFromZero: with the activator installed, an LLMInferenceService
// without a scheduler that KEDA scales to zero (idleReplicaCount 0) gets
// the activator's trigger and a workload Service the activator fronts; at
// zero it stays Ready and MainWorkloadScaledToZero says so.
func TestScaleFromZero(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: managerNamespace},
		Data: map[string]string{"activator.scalerAddress": "serval-activator.serval-system.svc.cluster.local:9091"}}
	require.NoError(t, k8s.Create(ctx, cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })

	ns := newNamespace(t)
	createService(t, ns, "idle", `
  model: {uri: hf://facebook/opt-125m}
  scaling:
    minReplicas: 1
    maxReplicas: 2
    keda:
      idleReplicaCount: 0
      triggers: [{type: cpu, metricType: Utilization, metadata: {value: "60"}}]
`)
	eventually(t, "the service reconciled", func() bool { return condition(t, ns, "idle", "PresetsCombined") == "True/Combined" })
	installKEDA(t)
	so := &unstructured.Unstructured{}
	so.SetGroupVersionKind(schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"})
	eventually(t, "the activator's trigger", func() bool {
		if k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "idle-kserve-keda"}, so) != nil {
			return false
		}
		triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
		last, _ := triggers[len(triggers)-1].(map[string]any)
		meta, _ := last["metadata"].(map[string]any)
		return last["type"] == "external-push" && meta["service"] == "idle-kserve-workload-svc"
	})
	svc := &corev1.Service{}
	require.True(t, exists(svc, ns, "idle-kserve-workload-svc"))
	assert.Equal(t, "true", svc.Labels[v1beta1.ScaleFromZeroLabel])
	require.NoError(t, retryOnConflict(func() error {
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "idle-kserve-keda"}, so); err != nil {
			return err
		}
		so.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ready"}}}
		return k8s.Status().Update(ctx, so)
	}))

	// KEDA scaled it to zero.
	require.NoError(t, retryOnConflict(func() error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "idle-kserve"}, dep); err != nil {
			return err
		}
		dep.Spec.Replicas = ptr.To[int32](0)
		return k8s.Update(ctx, dep, client.FieldOwner("keda"))
	}))
	require.NoError(t, retryOnConflict(func() error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "idle-kserve"}, dep); err != nil {
			return err
		}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
		return k8s.Status().Update(ctx, dep)
	}))
	eventually(t, "the workload Ready at zero, and scaled to zero", func() bool {
		return condition(t, ns, "idle", "MainWorkloadReady") == "True/Available" &&
			condition(t, ns, "idle", "MainWorkloadScaledToZero") == "True/NoDemand"
	})
}

// installKEDA installs KEDA's CRDs, unless an earlier test did (they are
// left for the rest of the run).
func installKEDA(t *testing.T) {
	t.Helper()
	if exists(&apiextensionsv1.CustomResourceDefinition{}, "", "scaledobjects.keda.sh") {
		return
	}
	paths, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	require.NoError(t, err)
}
