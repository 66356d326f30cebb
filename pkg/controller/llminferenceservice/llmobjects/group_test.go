package llmobjects_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

func grouped(name string, weight int32, change func(*v1alpha2.LLMInferenceService)) *v1alpha2.LLMInferenceService {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "hf://org/llama", Name: ptr.To("llama")},
			Router: &v1alpha2.RouterSpec{Route: &v1alpha2.GatewayRoutesSpec{Group: ptr.To("chat"), Weight: ptr.To(weight)}}}}
	if change != nil {
		change(svc)
	}
	return svc
}

func TestMemberBackend(t *testing.T) {
	for _, c := range []struct {
		name       string
		svc        *v1alpha2.LLMInferenceService
		kind, back string
	}{
		{"no scheduler: the workload Service", grouped("a", 1, nil), "Service", "a-kserve-workload-svc"},
		{"a scheduler: its pool", grouped("a", 1, func(s *v1alpha2.LLMInferenceService) { s.Spec.Router.Scheduler = &v1alpha2.SchedulerSpec{} }),
			"InferencePool", "a-inference-pool"},
		{"the user's pool", grouped("a", 1, func(s *v1alpha2.LLMInferenceService) {
			s.Spec.Router.Scheduler = &v1alpha2.SchedulerSpec{Pool: &v1alpha2.InferencePoolSpec{Ref: &corev1.LocalObjectReference{Name: "mine"}}}
		}), "InferencePool", "mine"},
		{"the pool its status reports", grouped("a", 1, func(s *v1alpha2.LLMInferenceService) {
			s.Status.Router = &v1alpha2.RouterStatus{Scheduler: &v1alpha2.ObservedSchedulerStatus{InferencePool: &v1alpha2.ObjectReference{Name: "a-inference-pool"}}}
		}), "InferencePool", "a-inference-pool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := llmobjects.Member(c.svc)
			assert.Equal(t, c.kind, string(*m.Backend.Kind))
			assert.Equal(t, c.back, string(m.Backend.Name))
			assert.Equal(t, gwapiv1.PortNumber(8000), *m.Backend.Port)
			assert.Equal(t, int32(1), m.Weight)
		})
	}
}

func TestSplitGroupByModels(t *testing.T) {
	lora := func(s *v1alpha2.LLMInferenceService) {
		s.Spec.Model.LoRA = &v1alpha2.LoRASpec{Adapters: []v1alpha2.LLMModelSpec{{Name: ptr.To("sql"), URI: "hf://org/sql"}}}
	}
	self := llmobjects.Member(grouped("b", 50, nil))
	matching, divergent := llmobjects.SplitGroup(self, []llmobjects.GroupMember{
		self, llmobjects.Member(grouped("c", 10, lora)), llmobjects.Member(grouped("a", 40, nil)),
		llmobjects.Member(grouped("d", 5, func(s *v1alpha2.LLMInferenceService) { s.Spec.Model.Name = ptr.To("mistral") })),
	})
	names := func(ms []llmobjects.GroupMember) (out []string) {
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	assert.Equal(t, []string{"a", "b"}, names(matching), "the same models, by name")
	assert.Equal(t, []string{"c", "d"}, names(divergent), "another model, or more adapters")
	assert.Equal(t, []string{"llama", "sql"}, divergent[0].Models)
}

func TestRoutable(t *testing.T) {
	ready := []metav1.Condition{{Type: "RouterReady", Status: "True"}, {Type: "MainWorkloadReady", Status: "True"}}
	now := metav1.Now()
	for _, c := range []struct {
		name     string
		change   func(*v1alpha2.LLMInferenceService)
		routable bool
	}{
		{"router and workload ready", func(s *v1alpha2.LLMInferenceService) { s.Status.Conditions = ready }, true},
		{"no status yet", func(*v1alpha2.LLMInferenceService) {}, false},
		{"the workload not available", func(s *v1alpha2.LLMInferenceService) { s.Status.Conditions = ready[:1] }, false},
		{"being deleted", func(s *v1alpha2.LLMInferenceService) { s.Status.Conditions = ready; s.DeletionTimestamp = &now }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.routable, llmobjects.Routable(grouped("a", 1, c.change)))
		})
	}
}
