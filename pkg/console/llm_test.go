package console

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// TestLLMDiagram: the path of a request through an LLMInferenceService
// with prefill and decode and a tokenizer: Gateway -> route -> pool ->
// picker -> decode and prefill, the picker -> the tokenizer; a Gateway the
// user may not read, or that does not exist, says so.
func TestLLMDiagram(t *testing.T) {
	route := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"parentRefs": []any{
		map[string]any{"name": "public", "namespace": "gateways"},
		map[string]any{"name": "gone"},
	}}}}
	children := []Child{
		{Kind: "HTTPRoute", Name: "llm-kserve-route", State: "ok", Detail: "Accepted", obj: route},
		{Kind: "InferencePool", Name: "llm-inference-pool", State: "ok", Detail: "Accepted"},
		{Kind: "Deployment", Name: "llm-kserve-router-scheduler", Component: "router-scheduler", State: "ok"},
		{Kind: "Deployment", Name: "llm-kserve-tokenizer", Component: "tokenizer", State: "wait"},
		{Kind: "Deployment", Name: "llm-kserve", Component: "workload", State: "ok"},
		{Kind: "LeaderWorkerSet", Name: "llm-kserve-prefill", Component: "prefill", State: "fail"},
		{Kind: "Service", Name: "llm-kserve-workload-svc", Component: "workload", State: "none"},
	}
	gw := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Programmed", "status": "True"}}}}}
	gw.SetAPIVersion("gateway.networking.k8s.io/v1")
	gw.SetKind("Gateway")
	gw.SetNamespace("gateways")
	gw.SetName("public")
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(gw).Build()
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llm"}}
	d := (&Server{}).llmDiagram(context.Background(), c, svc, children)
	require.NotNil(t, d)
	assert.Equal(t, []string{
		"gateway:gateways/public", "gateway:team/gone",
		"child:HTTPRoute/llm-kserve-route",
		"child:InferencePool/llm-inference-pool",
		"child:Deployment/llm-kserve-router-scheduler", "child:Deployment/llm-kserve-tokenizer",
		"child:Deployment/llm-kserve", "child:LeaderWorkerSet/llm-kserve-prefill",
	}, boxIDs(d), "the workload's Service is no stop on the path")
	assert.ElementsMatch(t, []string{
		"gateway:gateways/public -> child:HTTPRoute/llm-kserve-route",
		"gateway:team/gone -> child:HTTPRoute/llm-kserve-route",
		"child:HTTPRoute/llm-kserve-route -> child:InferencePool/llm-inference-pool",
		"child:InferencePool/llm-inference-pool -> child:Deployment/llm-kserve-router-scheduler",
		"child:Deployment/llm-kserve-router-scheduler -> child:Deployment/llm-kserve",
		"child:Deployment/llm-kserve-router-scheduler -> child:LeaderWorkerSet/llm-kserve-prefill",
		"child:Deployment/llm-kserve-router-scheduler -> child:Deployment/llm-kserve-tokenizer [tokens]",
	}, edgePairs(d))
	assert.Equal(t, "ok", boxByID(d, "gateway:gateways/public").State)
	assert.Equal(t, "fail", boxByID(d, "gateway:team/gone").State)
	assert.Equal(t, "not found", boxByID(d, "gateway:team/gone").Detail)
	assert.Equal(t, "Decode · Deployment", boxByID(d, "child:Deployment/llm-kserve").Kind)
	assert.Equal(t, "Prefill · LeaderWorkerSet", boxByID(d, "child:LeaderWorkerSet/llm-kserve-prefill").Kind)
	assert.Equal(t, "Tokenizer", boxByID(d, "child:Deployment/llm-kserve-tokenizer").Kind)
}

// TestLLMDiagramWithoutScheduler: a route straight to the workloads; a
// service with no route draws its workloads alone.
func TestLLMDiagramWithoutScheduler(t *testing.T) {
	route := &unstructured.Unstructured{Object: map[string]any{}}
	children := []Child{
		{Kind: "HTTPRoute", Name: "r", State: "ok", obj: route},
		{Kind: "Deployment", Name: "llm-kserve", Component: "workload", State: "ok"},
	}
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llm"}}
	d := (&Server{}).llmDiagram(context.Background(), c, svc, children)
	assert.Equal(t, []string{"child:HTTPRoute/r -> child:Deployment/llm-kserve"}, edgePairs(d))
	d = (&Server{}).llmDiagram(context.Background(), c, svc, children[1:])
	assert.Equal(t, []string{"child:Deployment/llm-kserve"}, boxIDs(d))
	assert.Empty(t, d.Edges)
}
