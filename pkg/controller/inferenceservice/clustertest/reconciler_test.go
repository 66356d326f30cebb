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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestCreateToReady: children are created with owner references and labels,
// and Ready follows the Deployment's availability.
func TestCreateToReady(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "ready-sklearn", "sklearn-ready")
	isvc := createISVC(t, ns, "iris", "sklearn-ready")

	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	eventually(t, "the Deployment, Service and HPA", func() bool {
		return exists(&appsv1.Deployment{}, ns, "iris-predictor") && exists(&corev1.Service{}, ns, "iris-predictor") &&
			exists(hpa, ns, "iris-predictor")
	})
	dep, _ := getDeployment(ns, "iris-predictor")
	ref := metav1.GetControllerOf(dep)
	require.NotNil(t, ref)
	assert.Equal(t, isvc.UID, ref.UID)
	assert.Equal(t, "iris", dep.Labels[v1beta1.InferenceServiceLabel])
	assert.Equal(t, "predictor", dep.Spec.Template.Labels[v1beta1.ComponentLabel])
	assert.Equal(t, int32(1), *dep.Spec.Replicas, "replicas are the HPA's, not sent: the default")
	assert.Equal(t, "storage-initializer", dep.Spec.Template.Spec.InitContainers[0].Name)
	assert.Equal(t, int32(1), *hpa.Spec.MinReplicas)
	assert.Equal(t, int32(80), *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)

	eventually(t, "PredictorReady False before the Deployment is available", func() bool {
		return hasCondition(getISVC(t, ns, "iris"), v1beta1.ConditionPredictorReady, metav1.ConditionFalse, v1beta1.ReasonNotAvailable)
	})
	makeAvailable(t, ns, "iris-predictor")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "iris"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	got := getISVC(t, ns, "iris")
	assert.Equal(t, "http://iris-"+ns+".example.com", got.Status.URL, "the external URL from the default domain template")
	assert.Equal(t, "http://iris-predictor."+ns+".svc.cluster.local", got.Status.Address.URL)
	assert.Equal(t, "http://iris-predictor-"+ns+".example.com", got.Status.Components[v1beta1.PredictorComponent].URL)
	assert.True(t, hasCondition(got, v1beta1.ConditionIngressReady, metav1.ConditionTrue, "IngressCreated"))
	assert.Equal(t, "ready-sklearn", got.Status.ClusterServingRuntimeName)
	assert.Equal(t, v1beta1.ProtocolV1, got.Status.ProtocolVersion)
	assert.Equal(t, v1beta1.Standard, got.Status.DeploymentMode)
	assert.Equal(t, got.Generation, got.Status.ObservedGeneration)
	assert.Equal(t, v1beta1.TransitionUpToDate, got.Status.ModelStatus.TransitionStatus)
	assert.Equal(t, v1beta1.ModelLoaded, got.Status.ModelStatus.States.ActiveModelState)
	assert.True(t, hasCondition(got, v1beta1.ConditionLatestDeploymentReady, metav1.ConditionTrue, v1beta1.ReasonRolledOut))

	readyTrue, ok := conditionGauge(t, ns, "iris", v1beta1.ConditionReady, "True")
	require.True(t, ok, "the condition gauge has the Ready series")
	assert.Equal(t, 1.0, readyTrue)
	readyFalse, _ := conditionGauge(t, ns, "iris", v1beta1.ConditionReady, "False")
	assert.Equal(t, 0.0, readyFalse)

	setDeploymentStatus(t, ns, "iris-predictor", false, true)
	eventually(t, "Ready False when the Deployment loses availability", func() bool {
		return hasCondition(getISVC(t, ns, "iris"), v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonComponentsNotReady)
	})
	eventually(t, "the gauge to follow", func() bool {
		v, _ := conditionGauge(t, ns, "iris", v1beta1.ConditionReady, "False")
		return v == 1
	})

	require.NoError(t, k8s.Delete(context.Background(), getISVC(t, ns, "iris")))
	eventually(t, "the gauge series removed with the InferenceService", func() bool {
		_, ok := conditionGauge(t, ns, "iris", v1beta1.ConditionReady, "True")
		return !ok
	})
}

// TestSpecChangeRollsDeployment: a changed model spec changes the pod template.
func TestSpecChangeRollsDeployment(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "roll-sklearn", "sklearn-roll")
	createISVC(t, ns, "roll", "sklearn-roll")
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "roll-predictor") })
	updateISVC(t, ns, "roll", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.Model.Env = []corev1.EnvVar{{Name: "WORKERS", Value: "4"}}
	})
	eventually(t, "the new env in the pod template", func() bool {
		dep, err := getDeployment(ns, "roll-predictor")
		return err == nil && len(dep.Spec.Template.Spec.Containers[0].Env) == 1
	})
}

// TestRuntimeLifecycle: a new runtime does not move the model (stickiness);
// updating the runtime rolls it; deleting it re-selects; with none left the
// failure is a reason.
func TestRuntimeLifecycle(t *testing.T) {
	ns := newNamespace(t)
	first := createClusterRuntime(t, "life-first", "sklearn-life", withImage("example.com/first:1"))
	createISVC(t, ns, "life", "sklearn-life")
	image := func() string {
		dep, err := getDeployment(ns, "life-predictor")
		if err != nil {
			return ""
		}
		return dep.Spec.Template.Spec.Containers[0].Image
	}
	eventually(t, "the first runtime's image", func() bool { return image() == "example.com/first:1" })
	eventually(t, "the runtime in status", func() bool { return getISVC(t, ns, "life").Status.ClusterServingRuntimeName == "life-first" })

	createServingRuntime(t, ns, "life-better", "sklearn-life", withImage("example.com/better:1"), withPriority(9))
	// A better runtime alone does not move the model; nor does a reconcile
	// for another reason (an annotation) that sees it.
	before := reconciled.of(ns, "life")
	updateISVC(t, ns, "life", func(i *v1beta1.InferenceService) { i.Annotations = map[string]string{"example.com/poke": "1"} })
	waitReconciled(t, ns, "life", before)
	consistently(t, "the model staying on its runtime", time.Second, func() bool {
		return image() == "example.com/first:1" && getISVC(t, ns, "life").Status.ClusterServingRuntimeName == "life-first"
	})

	first.Spec.Containers[0].Image = "example.com/first:2"
	require.NoError(t, k8s.Update(context.Background(), first))
	eventually(t, "the runtime update to roll the Deployment", func() bool { return image() == "example.com/first:2" })

	require.NoError(t, k8s.Delete(context.Background(), first))
	eventually(t, "re-selection after the runtime is deleted", func() bool {
		return image() == "example.com/better:1" && getISVC(t, ns, "life").Status.ServingRuntimeName == "life-better"
	})
	assert.Empty(t, getISVC(t, ns, "life").Status.ClusterServingRuntimeName)

	require.NoError(t, k8s.DeleteAllOf(context.Background(), &v1alpha1ServingRuntime, client.InNamespace(ns)))
	eventually(t, "NoSupportingRuntime", func() bool {
		i := getISVC(t, ns, "life")
		return hasCondition(i, v1beta1.ConditionReady, metav1.ConditionFalse, string(v1beta1.NoSupportingRuntime)) &&
			i.Status.ModelStatus.LastFailureInfo != nil && i.Status.ModelStatus.LastFailureInfo.Reason == v1beta1.NoSupportingRuntime
	})
}

// TestUnresolvedModelResolvesWhenARuntimeAppears: a runtime created later
// re-enqueues the InferenceServices waiting for its format.
func TestUnresolvedModelResolvesWhenARuntimeAppears(t *testing.T) {
	ns := newNamespace(t)
	createISVC(t, ns, "waiting", "sklearn-late")
	eventually(t, "NoSupportingRuntime", func() bool {
		return hasCondition(getISVC(t, ns, "waiting"), v1beta1.ConditionReady, metav1.ConditionFalse, string(v1beta1.NoSupportingRuntime))
	})
	createClusterRuntime(t, "late-sklearn", "sklearn-late")
	eventually(t, "the Deployment once the runtime exists", func() bool { return exists(&appsv1.Deployment{}, ns, "waiting-predictor") })
}

// TestConfigChangeRerenders: serval-config is watched; a bad value keeps the
// last good config.
func TestConfigChangeRerenders(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "cfg-sklearn", "sklearn-cfg")
	createISVC(t, ns, "cfg", "sklearn-cfg")
	initImage := func() string {
		dep, err := getDeployment(ns, "cfg-predictor")
		if err != nil || len(dep.Spec.Template.Spec.InitContainers) == 0 {
			return ""
		}
		return dep.Spec.Template.Spec.InitContainers[0].Image
	}
	eventually(t, "the default initializer", func() bool { return initImage() == "kserve/storage-initializer:v0.15.2" })
	makeAvailable(t, ns, "cfg-predictor")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "cfg"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: managerNamespace},
		Data: map[string]string{"storageInitializer.image": "example.com/init:2"}}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	eventually(t, "the configured initializer", func() bool { return initImage() == "example.com/init:2" })

	before := reconciled.of(ns, "cfg")
	cm.Data = map[string]string{"storageInitializer.image": "example.com/init:3", "resources.cpuLimit": "lots"}
	require.NoError(t, k8s.Update(context.Background(), cm))
	waitReconciled(t, ns, "cfg", before)
	consistently(t, "the last good config in force", time.Second, func() bool { return initImage() == "example.com/init:2" })
	eventually(t, "the ConfigValid condition naming the key", func() bool {
		c := cond(getISVC(t, ns, "cfg"), v1beta1.ConditionConfigValid)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1beta1.ReasonInvalidConfig &&
			strings.Contains(c.Message, `serval-config key resources.cpuLimit: "lots" is not a resource quantity`)
	})
	assert.True(t, hasCondition(getISVC(t, ns, "cfg"), v1beta1.ConditionReady, metav1.ConditionTrue, ""),
		"a rejected config does not make a serving InferenceService unready")
	cm.Data = map[string]string{"storageInitializer.image": "example.com/init:3"}
	require.NoError(t, k8s.Update(context.Background(), cm))
	eventually(t, "the fixed config applied and the condition gone", func() bool {
		return initImage() == "example.com/init:3" && cond(getISVC(t, ns, "cfg"), v1beta1.ConditionConfigValid) == nil
	})
}

// TestTemplateRendersInvalidHosts: a domainTemplate changed after the
// InferenceServices exist, which renders hosts a route cannot take, gives
// each affected service IngressReady False naming the template, the host
// and the limit, and ConfigValid False with the count; fixing the template
// clears both.
func TestTemplateRendersInvalidHosts(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "host-sklearn", "sklearn-host")
	createReadyISVC(t, ns, "hostlong-a", "sklearn-host")
	createReadyISVC(t, ns, "hostlong-b", "sklearn-host")
	// The name in the second label: the sample serval-config checks the
	// template with ("model-predictor") fits, "hostlong-a-predictor" does
	// not.
	suffix := strings.Repeat("x", 45)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "serval-config", Namespace: managerNamespace},
		Data: map[string]string{"ingress.domainTemplate": "{{ .Namespace }}.{{ .Name }}-" + suffix + ".{{ .IngressDomain }}"}}
	require.NoError(t, k8s.Create(context.Background(), cm))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	for _, name := range []string{"hostlong-a", "hostlong-b"} {
		eventually(t, name+": the conditions naming the template, the host and the limit", func() bool {
			isvc := getISVC(t, ns, name)
			ingress, valid := cond(isvc, v1beta1.ConditionIngressReady), cond(isvc, v1beta1.ConditionConfigValid)
			return ingress != nil && ingress.Status == metav1.ConditionFalse && ingress.Reason == v1beta1.ReasonInvalidHost &&
				strings.Contains(ingress.Message, "ingress.domainTemplate renders the host") &&
				strings.Contains(ingress.Message, `the label "`+name+"-predictor-"+suffix+`" is 66 characters, over the 63 a DNS label allows`) &&
				valid != nil && valid.Status == metav1.ConditionFalse && valid.Reason == v1beta1.ReasonInvalidHost &&
				strings.Contains(valid.Message, "ingress.domainTemplate renders an invalid host for ")
		})
	}
	// Each service counts those found so far when it is reconciled: the
	// later of the two counts both.
	a := cond(getISVC(t, ns, "hostlong-a"), v1beta1.ConditionConfigValid).Message
	b := cond(getISVC(t, ns, "hostlong-b"), v1beta1.ConditionConfigValid).Message
	assert.True(t, strings.Contains(a, "for 2 InferenceService(s) so far") || strings.Contains(b, "for 2 InferenceService(s) so far"), "%s\n%s", a, b)

	cm.Data = map[string]string{}
	require.NoError(t, k8s.Update(context.Background(), cm))
	for _, name := range []string{"hostlong-a", "hostlong-b"} {
		eventually(t, name+": the conditions cleared with the template fixed", func() bool {
			isvc := getISVC(t, ns, name)
			return cond(isvc, v1beta1.ConditionConfigValid) == nil && hasCondition(isvc, v1beta1.ConditionIngressReady, metav1.ConditionTrue, "")
		})
	}
}

// TestForeignWritersCauseNoRevertAndNoLoop: labels others add stay, and the
// operator does not fight over them.
func TestForeignWritersCauseNoRevertAndNoLoop(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "foreign-sklearn", "sklearn-foreign")
	createReadyISVC(t, ns, "foreign", "sklearn-foreign")

	dep, _ := getDeployment(ns, "foreign-predictor")
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"team":"platform"},"annotations":{"cost-center":"42"}},"spec":{"replicas":4}}`))
	reconciles := reconciled.of(ns, "foreign")
	require.NoError(t, k8s.Patch(context.Background(), dep, patch, client.FieldOwner("someone-else")))
	waitReconciled(t, ns, "foreign", reconciles)
	quiesce(t, ns) // the reconcile the change triggers re-applies once
	before := writes.total.Load()
	consistently(t, "foreign labels and replicas kept", 2*time.Second, func() bool {
		d, err := getDeployment(ns, "foreign-predictor")
		return err == nil && d.Labels["team"] == "platform" && d.Annotations["cost-center"] == "42" && *d.Spec.Replicas == 4
	})
	assert.Empty(t, writes.since(before, ns), "no writes while nothing changes")
	noReconcileStorm(t, ns, "foreign", time.Second, 0)
}

// TestAutoscalerStatusWakesNoReconcile: the HPA controller rewrites an
// autoscaler's status as the metrics move, and Serval reads none of it, so
// those writes wake no reconcile (the controller syncs each autoscaler every
// 15 s: with 1,000 InferenceServices, up to 67 a second); a change of its
// spec (drift) does.
func TestAutoscalerStatusWakesNoReconcile(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "hpa-sklearn", "sklearn-hpa")
	createReadyISVC(t, ns, "scaled", "sklearn-hpa")
	quiesce(t, ns)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: ns, Name: "scaled-predictor"}

	reconciles := reconciled.of(ns, "scaled")
	for desired := range int32(3) {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		require.NoError(t, k8s.Get(ctx, key, hpa))
		hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 1, DesiredReplicas: desired + 1, Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound", LastTransitionTime: metav1.Now()}}}
		require.NoError(t, k8s.Status().Update(ctx, hpa, client.FieldOwner("horizontal-pod-autoscaler")))
		eventually(t, "the manager's cache shows the status write", func() bool {
			cached := &autoscalingv2.HorizontalPodAutoscaler{}
			return managerCache.Get(ctx, key, cached) == nil && cached.ResourceVersion == hpa.ResourceVersion
		})
	}
	consistently(t, "no reconcile", time.Second, func() bool { return reconciled.of(ns, "scaled") == reconciles })

	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	require.NoError(t, k8s.Get(ctx, key, hpa))
	require.NoError(t, k8s.Patch(ctx, hpa, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"maxReplicas":9}}`)), client.FieldOwner("someone-else")))
	waitReconciled(t, ns, "scaled", reconciles)
}

// TestKubectlSpecCopyNeitherCachedNorLost: kubectl's copy of the spec in an
// annotation stays out of the manager's cache and out of the children, and
// the status writes that make the InferenceService Ready keep it on the
// object.
func TestKubectlSpecCopyNeitherCachedNorLost(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "applied-sklearn", "sklearn-applied")
	copyOfSpec := `{"apiVersion":"serving.kserve.io/v1beta1","kind":"InferenceService","spec":{"predictor":{"model":{"modelFormat":{"name":"sklearn-applied"}}}}}`
	createReadyISVC(t, ns, "applied", "sklearn-applied",
		withAnnotation(corev1.LastAppliedConfigAnnotation, copyOfSpec), withAnnotation("team", "search"))
	ctx := context.Background()

	live := getISVC(t, ns, "applied")
	assert.Equal(t, copyOfSpec, live.Annotations[corev1.LastAppliedConfigAnnotation], "the status writes kept it")
	cached := &v1beta1.InferenceService{}
	eventually(t, "the manager's cache has the Ready InferenceService", func() bool {
		return managerCache.Get(ctx, client.ObjectKeyFromObject(live), cached) == nil && cached.ResourceVersion == live.ResourceVersion
	})
	assert.NotContains(t, cached.Annotations, corev1.LastAppliedConfigAnnotation, "the cache holds no second copy of the spec")
	assert.Equal(t, "search", cached.Annotations["team"])

	dep, err := getDeployment(ns, "applied-predictor")
	require.NoError(t, err)
	assert.NotContains(t, dep.Annotations, corev1.LastAppliedConfigAnnotation)
	assert.Equal(t, "search", dep.Annotations["team"], "other annotations reach the children")
}

// TestDisableAutoUpdatePinsThePredictor: with disable-auto-update a runtime
// update neither rolls nor removes the running predictor; a change of the
// InferenceService itself does roll it onto the updated runtime.
func TestDisableAutoUpdatePinsThePredictor(t *testing.T) {
	ns := newNamespace(t)
	rt := createClusterRuntime(t, "pin-sklearn", "sklearn-pin", withImage("example.com/pin:1"))
	createISVC(t, ns, "pin", "sklearn-pin", withAnnotation(v1beta1.DisableAutoUpdateAnnotation, "true"))
	image := func() string {
		dep, err := getDeployment(ns, "pin-predictor")
		if err != nil {
			return ""
		}
		return dep.Spec.Template.Spec.Containers[0].Image
	}
	eventually(t, "the Deployment on the runtime's image", func() bool { return image() == "example.com/pin:1" })
	eventually(t, "the spec reconciled", func() bool {
		i := getISVC(t, ns, "pin")
		return i.Status.ObservedGeneration == i.Generation && i.Status.DeploymentMode != ""
	})

	before := reconciled.of(ns, "pin")
	rt.Spec.Containers[0].Image = "example.com/pin:2"
	require.NoError(t, k8s.Update(context.Background(), rt))
	waitReconciled(t, ns, "pin", before)
	consistently(t, "the pinned predictor kept as it runs", 1500*time.Millisecond, func() bool { return image() == "example.com/pin:1" })

	updateISVC(t, ns, "pin", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.Model.Env = []corev1.EnvVar{{Name: "ROLL", Value: "1"}}
	})
	eventually(t, "a spec change to roll onto the updated runtime", func() bool { return image() == "example.com/pin:2" })
}
