package clustertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestStopAndResume: the stop annotation removes the workload and the
// route and says so in Stopped, Ready and the components' conditions;
// removing it brings them back, on the runtime chosen before.
func TestStopAndResume(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "stop-sklearn", "sklearn-stop")
	createReadyISVC(t, ns, "halt", "sklearn-stop")
	assert.Nil(t, cond(getISVC(t, ns, "halt"), v1beta1.ConditionStopped), "no Stopped condition on a service never stopped")

	updateISVC(t, ns, "halt", func(i *v1beta1.InferenceService) { i.Annotations = map[string]string{v1beta1.StopAnnotation: "True"} })
	eventually(t, "Stopped", func() bool {
		return hasCondition(getISVC(t, ns, "halt"), v1beta1.ConditionStopped, metav1.ConditionTrue, v1beta1.ReasonStopped)
	})
	eventually(t, "the children removed", func() bool {
		return !exists(&appsv1.Deployment{}, ns, "halt-predictor") && !exists(&corev1.Service{}, ns, "halt-predictor") &&
			!exists(&networkingv1.Ingress{}, ns, "halt")
	})
	stopped := getISVC(t, ns, "halt")
	for _, c := range []string{v1beta1.ConditionReady, v1beta1.ConditionPredictorReady, v1beta1.ConditionIngressReady} {
		assert.True(t, hasCondition(stopped, c, metav1.ConditionFalse, v1beta1.ReasonStopped), c)
	}
	assert.Contains(t, cond(stopped, v1beta1.ConditionReady).Message, "stopped (serving.serval.dev/stop)")
	assert.Empty(t, stopped.Status.URL)
	assert.Equal(t, "stop-sklearn", stopped.Status.ClusterServingRuntimeName, "the runtime chosen stays")
	assert.Equal(t, stopped.Generation, stopped.Status.ObservedGeneration)

	updateISVC(t, ns, "halt", func(i *v1beta1.InferenceService) { delete(i.Annotations, v1beta1.StopAnnotation) })
	eventually(t, "the Deployment back", func() bool { return exists(&appsv1.Deployment{}, ns, "halt-predictor") })
	makeAvailable(t, ns, "halt-predictor")
	eventually(t, "Ready again", func() bool {
		return hasCondition(getISVC(t, ns, "halt"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
	resumed := getISVC(t, ns, "halt")
	assert.True(t, hasCondition(resumed, v1beta1.ConditionStopped, metav1.ConditionFalse, v1beta1.ReasonResumed))
	assert.True(t, exists(&networkingv1.Ingress{}, ns, "halt"), "the route is back")
	assert.NotEmpty(t, resumed.Status.URL)
}
