package inferencegraph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/childkinds"
	"github.com/serval-dev/serval/pkg/controller/inferencegraph"
)

func sampleGraph(annotations map[string]string) *v1alpha1.InferenceGraph {
	return &v1alpha1.InferenceGraph{
		ObjectMeta: metav1.ObjectMeta{Name: "dog-breed", Namespace: "models", UID: "uid-1", Annotations: annotations,
			Labels: map[string]string{"team": "vision"}},
		Spec: v1alpha1.InferenceGraphSpec{
			Nodes: map[string]v1alpha1.InferenceRouter{
				"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{
					{StepName: "classify", InferenceTarget: v1alpha1.InferenceTarget{ServiceName: "cat-dog"}},
					{StepName: "breed", InferenceTarget: v1alpha1.InferenceTarget{NodeName: "breeds"}, Data: v1alpha1.DataResponse,
						Condition: `predictions.#(==1)`, Dependency: v1alpha1.Hard},
				}},
				"breeds": {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{
					{InferenceTarget: v1alpha1.InferenceTarget{ServiceName: "dog-breed-v1"}, Weight: ptr.To[int64](80)},
					{InferenceTarget: v1alpha1.InferenceTarget{ServiceURL: "http://breeds.other.svc.cluster.local/v1/models/b:predict"}, Weight: ptr.To[int64](20)},
				}},
			},
			TimeoutSeconds: ptr.To[int64](30),
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 5, ScaleMetric: ptr.To(v1beta1.ScaleMetricCPU), ScaleTarget: ptr.To[int32](60),
			NodeSelector:   map[string]string{"pool": "cpu"},
			Tolerations:    []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "inference", Effect: corev1.TaintEffectNoSchedule}},
			RouterTimeouts: &v1alpha1.InferenceGraphRouterTimeouts{ServiceClient: ptr.To[int64](10)},
		},
	}
}

// TestRouterInheritsAnnotations: the router inherits the graph's
// annotations but kubectl's copy of the graph's spec.
func TestRouterInheritsAnnotations(t *testing.T) {
	ig := sampleGraph(map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "note": "graph"})
	comp, err := inferencegraph.Build(inferencegraph.Inputs{Graph: ig, Mode: v1beta1.Standard, URLs: urls, Router: config.Default().Router, DefaultImage: "router:v1"})
	require.NoError(t, err)
	assert.Equal(t, "graph", comp.Annotations["note"])
	assert.NotContains(t, comp.Annotations, corev1.LastAppliedConfigAnnotation)
	assert.Equal(t, "true", comp.Annotations["prometheus.io/scrape"], "the router's own")
}

var urls = map[string]string{
	"cat-dog":      "http://cat-dog-predictor.models.svc.cluster.local/v1/models/cat-dog:predict",
	"dog-breed-v1": "http://dog-breed-v1-predictor.models.svc.cluster.local/v2/models/dog-breed-v1/infer",
}

// TestGolden renders the router's objects in each mode.
func TestGolden(t *testing.T) {
	cfg := config.Default()
	cfg.Router.PropagateHeaders = []string{"Authorization", "X-Trace-*"}
	cases := []struct {
		name string
		ig   *v1alpha1.InferenceGraph
		mode v1beta1.DeploymentMode
	}{
		{"standard", sampleGraph(nil), v1beta1.Standard},
		{"standard-resources", func() *v1alpha1.InferenceGraph {
			ig := sampleGraph(map[string]string{v1beta1.AutoscalerClassAnnotation: "none"})
			ig.Spec.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}
			return ig
		}(), v1beta1.Standard},
		{"knative", sampleGraph(map[string]string{v1beta1.DeploymentModeAnnotation: "Serverless"}), v1beta1.Knative},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp, err := inferencegraph.Build(inferencegraph.Inputs{Graph: tc.ig, Mode: tc.mode, URLs: urls, Router: cfg.Router, DefaultImage: "ghcr.io/serval-dev/serval-manager:v0.3.0", Limits: v1alpha1.DefaultGraphLimits})
			require.NoError(t, err)
			objs, err := childkinds.Mode(tc.mode).Objects(comp)
			require.NoError(t, err)
			golden.Check(t, "router-"+tc.name, golden.Objects(t, objs))
		})
	}
}

func TestRoutedGraph(t *testing.T) {
	ig := sampleGraph(nil)
	data, err := inferencegraph.RoutedGraph(&ig.Spec, urls)
	require.NoError(t, err)
	assert.JSONEq(t, `{"nodes":{
		"root":{"routerType":"Sequence","steps":[
			{"name":"classify","serviceUrl":"http://cat-dog-predictor.models.svc.cluster.local/v1/models/cat-dog:predict"},
			{"name":"breed","nodeName":"breeds","data":"$response","condition":"predictions.#(==1)","dependency":"Hard"}]},
		"breeds":{"routerType":"Splitter","steps":[
			{"serviceUrl":"http://dog-breed-v1-predictor.models.svc.cluster.local/v2/models/dog-breed-v1/infer","weight":80},
			{"serviceUrl":"http://breeds.other.svc.cluster.local/v1/models/b:predict","weight":20}]}},
		"timeout":30,"routerTimeouts":{"serviceClient":10}}`, string(data))
	_, err = inferencegraph.RoutedGraph(&ig.Spec, map[string]string{"cat-dog": "http://x"})
	assert.EqualError(t, err, "InferenceService dog-breed-v1 has no URL yet")
}

func TestPredictURL(t *testing.T) {
	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: "iris"},
		Status: v1beta1.InferenceServiceStatus{Address: &v1beta1.Addressable{URL: "http://iris-predictor.ns.svc.cluster.local"}}}
	assert.Equal(t, "http://iris-predictor.ns.svc.cluster.local/v1/models/iris:predict", inferencegraph.PredictURL(isvc), "v1 unless status says otherwise")
	isvc.Status.ProtocolVersion = v1beta1.ProtocolV2
	assert.Equal(t, "http://iris-predictor.ns.svc.cluster.local/v2/models/iris/infer", inferencegraph.PredictURL(isvc))
}
