package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice"
	"github.com/serval-dev/serval/pkg/statusmetrics"
)

var v1alpha1ServingRuntime = v1alpha1.ServingRuntime{}

// TestAutoscalerHandoverKeepsReplicas: switching autoscalerClass from none to
// hpa must not drop the running replicas to 1.
func TestAutoscalerHandoverKeepsReplicas(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "handover-sklearn", "sklearn-handover")
	createISVC(t, ns, "handover", "sklearn-handover",
		withAnnotation(v1beta1.AutoscalerClassAnnotation, "none"),
		withPredictor(func(p *v1beta1.PredictorSpec) { p.MinReplicas = ptr.To[int32](3); p.MaxReplicas = 5 }))
	eventually(t, "3 replicas", func() bool {
		dep, err := getDeployment(ns, "handover-predictor")
		return err == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 3
	})
	assert.False(t, exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "handover-predictor"))

	before := reconciled.of(ns, "handover")
	updateISVC(t, ns, "handover", func(i *v1beta1.InferenceService) { i.Annotations[v1beta1.AutoscalerClassAnnotation] = "hpa" })
	eventually(t, "the HPA", func() bool { return exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "handover-predictor") })
	waitReconciled(t, ns, "handover", before)
	consistently(t, "the replicas kept at 3", time.Second, func() bool {
		dep, err := getDeployment(ns, "handover-predictor")
		return err == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 3
	})
	dep, _ := getDeployment(ns, "handover-predictor")
	for _, mf := range dep.ManagedFields {
		if mf.Manager == "serval-manager" {
			assert.NotContains(t, string(mf.FieldsV1.Raw), `"f:replicas"`, "serval-manager released replicas")
		}
	}
}

// TestForeignDeploymentIsNotAdopted: a same-named Deployment someone else
// owns is left alone and the InferenceService names it.
func TestForeignDeploymentIsNotAdopted(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "adopt-sklearn", "sklearn-adopt")
	labels := map[string]string{"app": "theirs"}
	foreign := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "adopt-predictor", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "theirs", Image: "example.com/theirs:1"}}},
		}},
	}
	require.NoError(t, k8s.Create(context.Background(), foreign))
	createISVC(t, ns, "adopt", "sklearn-adopt")
	eventually(t, "the conflict condition", func() bool {
		c := cond(getISVC(t, ns, "adopt"), v1beta1.ConditionReady)
		return c != nil && c.Reason == v1beta1.ReasonConflict
	})
	assert.Contains(t, cond(getISVC(t, ns, "adopt"), v1beta1.ConditionPredictorReady).Message,
		"Deployment "+ns+"/adopt-predictor exists and is not controlled by this InferenceService")
	dep, _ := getDeployment(ns, "adopt-predictor")
	assert.Equal(t, "theirs", dep.Spec.Template.Spec.Containers[0].Name)
	assert.Nil(t, metav1.GetControllerOf(dep))

	// Deleted as the message says, it is noticed with no change of the
	// InferenceService: the predictor is created.
	require.NoError(t, k8s.Delete(context.Background(), dep))
	deadline := time.Now().Add(3 * inferenceservice.ConflictRecheckInterval)
	for time.Now().Before(deadline) {
		if d, err := getDeployment(ns, "adopt-predictor"); err == nil && metav1.GetControllerOf(d) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the predictor was not created within %s of the conflicting Deployment's deletion", 3*inferenceservice.ConflictRecheckInterval)
}

// TestRemovingTheTransformerPrunesIt.
func TestRemovingTheTransformerPrunesIt(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "prune-sklearn", "sklearn-prune")
	createISVC(t, ns, "prune", "sklearn-prune", withTransformer())
	eventually(t, "the transformer", func() bool {
		return exists(&appsv1.Deployment{}, ns, "prune-transformer") && exists(&corev1.Service{}, ns, "prune-transformer")
	})
	eventually(t, "the top-level address on the transformer", func() bool {
		a := getISVC(t, ns, "prune").Status.Address
		return a != nil && a.URL == "http://prune-transformer."+ns+".svc.cluster.local"
	})
	updateISVC(t, ns, "prune", func(i *v1beta1.InferenceService) { i.Spec.Transformer = nil })
	eventually(t, "the transformer's children pruned", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "prune-transformer") && !exists(&corev1.Service{}, ns, "prune-transformer") &&
			!exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "prune-transformer")
	})
	assert.True(t, exists(&appsv1.Deployment{}, ns, "prune-predictor"))
	eventually(t, "TransformerReady removed", func() bool { return cond(getISVC(t, ns, "prune"), v1beta1.ConditionTransformerReady) == nil })

	updateISVC(t, ns, "prune", func(i *v1beta1.InferenceService) {
		i.Annotations = map[string]string{v1beta1.AutoscalerClassAnnotation: "none"}
	})
	eventually(t, "the HPA pruned after switching to none", func() bool {
		return !exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "prune-predictor")
	})
}

// TestIdleReconcileSendsZeroWrites: re-reconciling an unchanged, Ready
// InferenceService writes nothing.
func TestIdleReconcileSendsZeroWrites(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "idle-sklearn", "sklearn-idle")
	start := writes.total.Load()
	createISVC(t, ns, "idle", "sklearn-idle", withTransformer())
	eventually(t, "the Deployments", func() bool {
		return exists(&appsv1.Deployment{}, ns, "idle-predictor") && exists(&appsv1.Deployment{}, ns, "idle-transformer")
	})
	makeAvailable(t, ns, "idle-predictor")
	makeAvailable(t, ns, "idle-transformer")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "idle"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	quiesce(t, ns)
	createWrites := writes.since(start, ns)
	t.Logf("writes from create to Ready: %d: %v", len(createWrites), createWrites)
	var creates, childWrites int
	for _, w := range createWrites {
		switch {
		case strings.HasPrefix(w, "POST "):
			creates++
		case !strings.HasSuffix(w, "/status"):
			childWrites++
		}
	}
	assert.Equal(t, 7, creates, "one create per child: 2 Deployments, 2 Services, 2 HPAs, the Ingress")
	assert.Zero(t, childWrites, "no second write of a child")
	for _, r := range writes.readsInto(ns) {
		assert.Contains(t, r, "/serviceaccounts/", "no read of a child: the create itself tells whether the name is taken")
	}

	// A ConfigMap event re-enqueues every InferenceService without changing
	// anything they render.
	reconcilesBefore := reconciled.of(ns, "idle")
	before := writes.total.Load()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: managerNamespace},
		Data: map[string]string{"deploy.defaultDeploymentMode": "Standard"}}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	waitReconciled(t, ns, "idle", reconcilesBefore)
	quiesce(t, ns)
	idle := writes.since(before, ns)
	t.Logf("writes of the idle re-reconcile: %d", len(idle))
	assert.Empty(t, idle, "an idle re-reconcile writes nothing")
}

// conditionGauge reads serval_condition for one InferenceService series;
// ok is false when the series does not exist.
func conditionGauge(t *testing.T, ns, name, typ, status string) (value float64, ok bool) {
	t.Helper()
	value, ok, err := testenv.MetricSum(statusmetrics.ConditionMetric,
		map[string]string{"kind": "InferenceService", "namespace": ns, "name": name, "type": typ, "status": status})
	require.NoError(t, err)
	return value, ok
}

// TestFieldDroppedAfterCreateIsRemoved: a child is created with a plain
// create (its fields under an Update entry of Serval's field manager); a
// field Serval stops sending later is still removed, as with any apply.
func TestFieldDroppedAfterCreateIsRemoved(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "drop-sklearn", "sklearn-drop")
	createISVC(t, ns, "drop", "sklearn-drop", withPredictor(func(p *v1beta1.PredictorSpec) {
		p.Model.Env = []corev1.EnvVar{{Name: "KEEP", Value: "1"}, {Name: "DROP", Value: "1"}}
	}))
	env := func() map[string]string {
		dep, err := getDeployment(ns, "drop-predictor")
		if err != nil {
			return nil
		}
		out := map[string]string{}
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			out[e.Name] = e.Value
		}
		return out
	}
	eventually(t, "the Deployment with both variables", func() bool { return env()["DROP"] == "1" && env()["KEEP"] == "1" })
	updateISVC(t, ns, "drop", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.Model.Env = []corev1.EnvVar{{Name: "KEEP", Value: "2"}}
	})
	eventually(t, "the dropped variable removed", func() bool {
		e := env()
		_, dropped := e["DROP"]
		return e["KEEP"] == "2" && !dropped
	})
	dep, _ := getDeployment(ns, "drop-predictor")
	for _, mf := range dep.ManagedFields {
		assert.False(t, mf.Manager == "serval-manager" && mf.Operation == metav1.ManagedFieldsOperationUpdate,
			"the create's Update entry was folded into the Apply entry")
	}
}
