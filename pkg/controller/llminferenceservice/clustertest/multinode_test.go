package clustertest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

func getLWS(ns, name string) (*unstructured.Unstructured, error) {
	u := llmobjects.LeaderWorkerSetKind.New().(*unstructured.Unstructured)
	return u, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u)
}

// setLWSAvailable plays the LeaderWorkerSet controller: its Available
// condition.
func setLWSAvailable(t *testing.T, ns, name string, available bool) {
	t.Helper()
	require.NoError(t, retryOnConflict(func() error {
		u, err := getLWS(ns, name)
		if err != nil {
			return err
		}
		status, reason := "True", "AllGroupsReady"
		if !available {
			status, reason = "False", "GroupsNotReady"
		}
		u.Object["status"] = map[string]any{"readyReplicas": int64(1), "conditions": []any{map[string]any{
			"type": "Available", "status": status, "reason": reason, "message": "groups: " + reason,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
		return k8s.Status().Update(context.Background(), u)
	}))
}

// setHPAActive plays the HPA controller: it can scale, and scales.
func setHPAActive(t *testing.T, ns, name string) {
	t.Helper()
	require.NoError(t, retryOnConflict(func() error {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, hpa); err != nil {
			return err
		}
		now := metav1.Now()
		hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{DesiredReplicas: 2, CurrentReplicas: 2, Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", LastTransitionTime: now},
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound", LastTransitionTime: now}}}
		return k8s.Status().Update(context.Background(), hpa)
	}))
}

// installLWS installs LeaderWorkerSet's CRD for the rest of the test
// binary (later tests may need it too).
func installLWS(t *testing.T) {
	t.Helper()
	paths, err := testenv.UpstreamCRDPathsOf(testenv.LWS)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if k8s.Get(context.Background(), types.NamespacedName{Name: llmobjects.LeaderWorkerSetKind.CRD}, crd) == nil {
		return
	}
	_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: paths})
	require.NoError(t, err)
}

// TestMultiNodeWorkload: a data-parallel service across nodes waits for
// the LeaderWorkerSet CRD by name, then runs as one LeaderWorkerSet (no
// Deployment), sized by its parallelism; it is ready when the
// LeaderWorkerSet is available and its HPA scales it (the replicas'
// handover is TestScalingTakesOverTheReplicas's); at steady state nothing
// is written.
func TestMultiNodeWorkload(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "big", `
  model: {uri: hf://deepseek-ai/DeepSeek-R1}
  parallelism: {data: 16, dataLocal: 8, expert: true}
  worker: {}
  scaling: {minReplicas: 1, maxReplicas: 3, wva: {hpa: {}}}
`)
	if exists(&apiextensionsv1.CustomResourceDefinition{}, "", llmobjects.LeaderWorkerSetKind.CRD) {
		t.Log("the LeaderWorkerSet CRD is installed already: the missing-CRD path is not exercised in this run")
	} else {
		eventually(t, "MissingCRD naming the LeaderWorkerSet CRD", func() bool {
			return condition(t, ns, "big", "WorkerWorkloadReady") == "False/MissingCRD" &&
				strings.Contains(message(t, ns, "big", "WorkerWorkloadReady"), "the CRD leaderworkersets.leaderworkerset.x-k8s.io is not installed; install LeaderWorkerSet")
		})
		assert.Equal(t, "False/MissingCRD", condition(t, ns, "big", "Ready"))
		installLWS(t)
	}
	eventually(t, "the LeaderWorkerSet", func() bool { _, err := getLWS(ns, "big-kserve-mn"); return err == nil })
	lws, _ := getLWS(ns, "big-kserve-mn")
	size, _, _ := unstructured.NestedInt64(lws.Object, "spec", "leaderWorkerTemplate", "size")
	assert.Equal(t, int64(2), size, "data / dataLocal nodes per replica")
	err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "big-kserve"}, &appsv1.Deployment{})
	assert.True(t, apierrors.IsNotFound(err), "no single-node Deployment")
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	require.True(t, exists(hpa, ns, "big-kserve-hpa"))
	assert.Equal(t, "LeaderWorkerSet", hpa.Spec.ScaleTargetRef.Kind)
	eventually(t, "not ready until the LeaderWorkerSet reports", func() bool {
		return condition(t, ns, "big", "WorkerWorkloadReady") == "False/NotAvailable"
	})
	assert.Empty(t, condition(t, ns, "big", "MainWorkloadReady"), "MainWorkloadReady belongs to a single-node workload")

	setLWSAvailable(t, ns, "big-kserve-mn", false)
	eventually(t, "the LeaderWorkerSet's reason", func() bool {
		return strings.Contains(message(t, ns, "big", "WorkerWorkloadReady"), "GroupsNotReady")
	})
	setLWSAvailable(t, ns, "big-kserve-mn", true)
	eventually(t, "WorkerWorkloadReady", func() bool { return condition(t, ns, "big", "WorkerWorkloadReady") == "True/Available" })
	assert.Equal(t, "False/HPAProgressing", condition(t, ns, "big", "ScalingReady"))
	assert.Equal(t, "False/HPAProgressing", condition(t, ns, "big", "Ready"), "the autoscaler is part of WorkloadsReady, as in KServe")
	setHPAActive(t, ns, "big-kserve-hpa")
	eventually(t, "Ready", func() bool { return condition(t, ns, "big", "Ready") == "True/Ready" })
	assert.Equal(t, "True/ScalingReady", condition(t, ns, "big", "ScalingReady"))
	assert.Equal(t, "LeaderWorkerSet", get(t, ns, "big").Status.Workloads.Primary.Kind)

	// Steady state: a reconcile of the unchanged service writes nothing.
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	before, reconciled := len(writes.Into(ns)), reconciles.Of("llminferenceservice", ns, "big")
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "big")
		s.Annotations = map[string]string{"touched": "yes"}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "a reconcile", func() bool { return reconciles.Of("llminferenceservice", ns, "big") > reconciled })
	require.True(t, writes.Settled(ns, time.Second, 30*time.Second))
	assert.Empty(t, writes.Into(ns)[before:], "an unchanged service is not written to")

	// Back to one node: the LeaderWorkerSet and the HPA go, a Deployment
	// comes.
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "big")
		s.Spec.Worker, s.Spec.Parallelism, s.Spec.Scaling = nil, nil, nil
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "the Deployment, and the LeaderWorkerSet and HPA pruned", func() bool {
		_, err := getLWS(ns, "big-kserve-mn")
		return exists(&appsv1.Deployment{}, ns, "big-kserve") && apierrors.IsNotFound(err) &&
			!exists(&autoscalingv2.HorizontalPodAutoscaler{}, ns, "big-kserve-hpa")
	})
	eventually(t, "WorkerWorkloadReady removed", func() bool { return condition(t, ns, "big", "WorkerWorkloadReady") == "" })
}

// TestPrefillDecode: a service with a prefill workload runs a prefill
// Deployment beside the decode one, each ready on its own condition; the
// decode Deployment's pods are told from the prefill pods its selector
// also matches.
func TestPrefillDecode(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "pd", `
  model: {uri: hf://meta-llama/Llama-3.1-8B-Instruct}
  replicas: 1
  prefill: {replicas: 2}
`)
	eventually(t, "both Deployments", func() bool {
		return exists(&appsv1.Deployment{}, ns, "pd-kserve") && exists(&appsv1.Deployment{}, ns, "pd-kserve-prefill")
	})
	prefill := &appsv1.Deployment{}
	require.True(t, exists(prefill, ns, "pd-kserve-prefill"))
	assert.Equal(t, "prefill", prefill.Spec.Template.Labels[llmobjects.RoleLabel])
	assert.Equal(t, int32(2), *prefill.Spec.Replicas)
	decode := &appsv1.Deployment{}
	require.True(t, exists(decode, ns, "pd-kserve"))
	assert.Equal(t, "decode", decode.Spec.Template.Labels[llmobjects.RoleLabel])
	assert.True(t, slices.ContainsFunc(decode.Spec.Template.Spec.InitContainers, func(c corev1.Container) bool {
		return c.Name == "llm-d-routing-sidecar" && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
	}), "the decode pods' routing sidecar")
	assert.Equal(t, "pd-kserve", decode.Spec.Template.Spec.ServiceAccountName, "the sidecar's pods run as their own account")
	binding := &rbacv1.RoleBinding{}
	require.True(t, exists(binding, ns, "pd-kserve-rb"))
	assert.Equal(t, "serval-routing-sidecar", binding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "pd-kserve", Namespace: ns}}, binding.Subjects)
	assert.True(t, exists(&corev1.ServiceAccount{}, ns, "pd-kserve"))

	makeAvailable(t, ns, "pd-kserve")
	eventually(t, "decode ready, prefill not", func() bool {
		return condition(t, ns, "pd", "MainWorkloadReady") == "True/Available" &&
			condition(t, ns, "pd", "PrefillWorkloadReady") == "False/NotAvailable"
	})
	assert.Equal(t, "False/NotAvailable", condition(t, ns, "pd", "WorkloadsReady"))
	makeAvailable(t, ns, "pd-kserve-prefill")
	eventually(t, "Ready", func() bool { return condition(t, ns, "pd", "Ready") == "True/Ready" })
	applied := get(t, ns, "pd").Status.AppliedConfigRefs
	var names []string
	for _, a := range applied {
		names = append(names, a.Name)
	}
	assert.Equal(t, []string{"serval-config-llm-prefill-template", "serval-config-llm-decode-template"}, names)

	// The prefill workload goes: its Deployment is pruned.
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "pd")
		s.Spec.Prefill = nil
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "the prefill Deployment and the sidecar's grant pruned", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "pd-kserve-prefill") && !exists(&rbacv1.RoleBinding{}, ns, "pd-kserve-rb")
	})
	eventually(t, "PrefillWorkloadReady removed", func() bool { return condition(t, ns, "pd", "PrefillWorkloadReady") == "" })
}

// TestScalingTakesOverTheReplicas: a LeaderWorkerSet running three groups
// keeps them when scaling replaces replicas (the replicas are handed over,
// not reset to the default 1); the KEDA actuator waits for KEDA's CRD by
// name, then its ScaledObject scales the LeaderWorkerSet and ScalingReady
// follows its Ready.
func TestScalingTakesOverTheReplicas(t *testing.T) {
	installLWS(t)
	ns := newNamespace(t)
	createService(t, ns, "scaled", `
  model: {uri: hf://facebook/opt-125m}
  parallelism: {data: 2, dataLocal: 1}
  worker: {}
  replicas: 3
`)
	eventually(t, "three groups", func() bool {
		u, err := getLWS(ns, "scaled-kserve-mn")
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return err == nil && n == 3
	})
	require.NoError(t, retryOnConflict(func() error {
		s := get(t, ns, "scaled")
		s.Spec.Replicas = nil
		s.Spec.Scaling = &v1alpha2.ScalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 4, KEDA: &v1alpha2.DirectKEDAScalingSpec{
			Triggers: []v1alpha2.ScaleTrigger{{Type: "cpu", MetricType: "Utilization", Metadata: map[string]string{"value": "60"}}}}}
		return k8s.Update(context.Background(), s)
	}))
	eventually(t, "MissingCRD naming KEDA's", func() bool {
		return condition(t, ns, "scaled", "ScalingReady") == "False/MissingCRD" &&
			strings.Contains(message(t, ns, "scaled", "ScalingReady"), "the CRD scaledobjects.keda.sh is not installed")
	})
	eventually(t, "Serval no longer sends the replicas", func() bool {
		u, err := getLWS(ns, "scaled-kserve-mn")
		if err != nil {
			return false
		}
		for _, mf := range u.GetManagedFields() {
			if mf.Manager == "serval-manager" && mf.Operation == metav1.ManagedFieldsOperationApply && strings.Contains(string(mf.FieldsV1.Raw), `"f:replicas"`) {
				return false
			}
		}
		return true
	})
	u, _ := getLWS(ns, "scaled-kserve-mn")
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	assert.Equal(t, int64(3), n, "the running groups are kept, not reset to 1")

	installKEDA(t)
	so := &unstructured.Unstructured{}
	so.SetGroupVersionKind(schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"})
	eventually(t, "the ScaledObject once the CRD exists", func() bool {
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "scaled-kserve-keda"}, so) == nil
	})
	kind, _, _ := unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "kind")
	assert.Equal(t, "LeaderWorkerSet", kind)
	eventually(t, "waiting for KEDA", func() bool { return condition(t, ns, "scaled", "ScalingReady") == "False/ScaledObjectNotReady" })
	require.NoError(t, retryOnConflict(func() error {
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "scaled-kserve-keda"}, so); err != nil {
			return err
		}
		so.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ready"}}}
		return k8s.Status().Update(context.Background(), so)
	}))
	eventually(t, "ScalingReady", func() bool { return condition(t, ns, "scaled", "ScalingReady") == "True/ScalingReady" })
}

// TestKEDAActuatorNeedsPrometheus: WVA's KEDA actuator without serval-config's
// Prometheus is refused on ScalingReady, naming the key, and nothing of the
// service is applied half-way.
func TestKEDAActuatorNeedsPrometheus(t *testing.T) {
	ns := newNamespace(t)
	createService(t, ns, "wva", `
  model: {uri: hf://facebook/opt-125m}
  scaling: {minReplicas: 1, maxReplicas: 2, wva: {keda: {}}}
`)
	eventually(t, "InvalidConfig naming the key", func() bool {
		return condition(t, ns, "wva", "ScalingReady") == "False/InvalidConfig" &&
			strings.Contains(message(t, ns, "wva", "ScalingReady"), "serval-config llmAutoscaling.prometheus.url is empty")
	})
	assert.Equal(t, "False/InvalidConfig", condition(t, ns, "wva", "Ready"))
	assert.False(t, exists(&appsv1.Deployment{}, ns, "wva-kserve"), "the workload waits for its autoscaler's config")
}
