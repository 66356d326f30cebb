package clustertest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// withWorkerSpec gives a runtime KServe's worker container.
func withWorkerSpec(s *v1alpha1.ServingRuntimeSpec) {
	s.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"containers":[{"name":"worker-container","image":"example.com/worker:1"}]}`)}
}

// multiNode makes the predictor multi-node: three pipeline stages on a
// claim, with no autoscaler.
func multiNode(i *v1beta1.InferenceService) {
	i.Annotations = map[string]string{v1beta1.AutoscalerClassAnnotation: "none"}
	i.Spec.Predictor.Model.StorageURI = ptr.To("pvc://models/llama")
	i.Spec.Predictor.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"pipelineParallelSize":3}`)}
}

// TestMultiNodePredictor: a predictor with a workerSpec runs on the
// multi-node runtime only (the plain one of the same format is skipped),
// as a head and a worker Deployment of nodes-1 replicas with the headless
// Services of its generation; it is ready once both Deployments are; a new
// generation's Services replace the old ones.
func TestMultiNodePredictor(t *testing.T) {
	ns := newNamespace(t)
	createServingRuntime(t, ns, "plain", "hf-mn", withPriority(5))
	createServingRuntime(t, ns, "multinode", "hf-mn", withPriority(1), withWorkerSpec)
	createISVC(t, ns, "llama", "hf-mn", multiNode)

	eventually(t, "the head and worker Deployments", func() bool {
		_, e1 := getDeployment(ns, "llama-predictor")
		_, e2 := getDeployment(ns, "llama-predictor-worker")
		return e1 == nil && e2 == nil
	})
	head, _ := getDeployment(ns, "llama-predictor")
	assert.Equal(t, "example.com/hf-mn-server:1", head.Spec.Template.Spec.Containers[0].Image, "the multi-node runtime, though the plain one ranks higher")
	worker, _ := getDeployment(ns, "llama-predictor-worker")
	assert.Equal(t, int32(2), *worker.Spec.Replicas, "three nodes: the head and two workers")
	env := map[string]string{}
	for _, e := range worker.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	gen := getISVC(t, ns, "llama").Generation
	assert.Equal(t, "llama-head-"+itoa(gen), env["HEAD_SVC"])
	assert.Equal(t, "3", env["RAY_NODE_COUNT"])
	svc := &corev1.Service{}
	require.True(t, exists(svc, ns, "llama-head-"+itoa(gen)))
	assert.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP)
	assert.True(t, exists(&corev1.Service{}, ns, "llama-workers-"+itoa(gen)))

	makeAvailable(t, ns, "llama-predictor")
	eventually(t, "not ready without the workers", func() bool {
		c := cond(getISVC(t, ns, "llama"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "the worker Deployment llama-predictor-worker is not available")
	})
	makeAvailable(t, ns, "llama-predictor-worker")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "llama"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})

	updateISVC(t, ns, "llama", func(i *v1beta1.InferenceService) {
		i.Spec.Predictor.WorkerSpec = &apiextensionsv1.JSON{Raw: []byte(`{"pipelineParallelSize":2}`)}
	})
	next := getISVC(t, ns, "llama").Generation
	eventually(t, "the new generation's Services, the old ones pruned, one worker", func() bool {
		w, err := getDeployment(ns, "llama-predictor-worker")
		return err == nil && *w.Spec.Replicas == 1 && exists(&corev1.Service{}, ns, "llama-head-"+itoa(next)) &&
			!exists(&corev1.Service{}, ns, "llama-head-"+itoa(gen)) && !exists(&corev1.Service{}, ns, "llama-workers-"+itoa(gen))
	})
}

// TestWorkerSpecNeedsAMultiNodeRuntime: a predictor with a workerSpec that
// names a runtime without one is told so, KServe's reason.
func TestWorkerSpecNeedsAMultiNodeRuntime(t *testing.T) {
	ns := newNamespace(t)
	createServingRuntime(t, ns, "plain", "hf-plain")
	createISVC(t, ns, "named", "hf-plain", multiNode, withPredictor(func(p *v1beta1.PredictorSpec) { p.Model.Runtime = ptr.To("plain") }))
	eventually(t, "InvalidWorkerSpecNotSet", func() bool {
		st := getISVC(t, ns, "named").Status.ModelStatus
		return st.LastFailureInfo != nil && st.LastFailureInfo.Reason == v1beta1.InvalidWorkerSpecNotSet &&
			strings.Contains(st.LastFailureInfo.Message, "runtime plain has none")
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
