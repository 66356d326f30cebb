package llmobjects_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

func TestCertificateNames(t *testing.T) {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}}
	for _, c := range []struct {
		name string
		spec v1alpha2.LLMInferenceServiceSpec
		want []string
	}{
		{"the workload's Service", v1alpha2.LLMInferenceServiceSpec{},
			[]string{"llama-kserve-workload-svc.team.svc", "llama-kserve-workload-svc.team.svc.cluster.local"}},
		{"and the picker's", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{}}},
			[]string{"llama-epp-service.team.svc", "llama-epp-service.team.svc.cluster.local",
				"llama-kserve-workload-svc.team.svc", "llama-kserve-workload-svc.team.svc.cluster.local"}},
		{"the picker a pool spec names", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Pool: &v1alpha2.InferencePoolSpec{Spec: &v1.InferencePoolSpec{EndpointPickerRef: &v1.EndpointPickerRef{Name: "picker"}}}}}},
			[]string{"llama-kserve-workload-svc.team.svc", "llama-kserve-workload-svc.team.svc.cluster.local",
				"picker.team.svc", "picker.team.svc.cluster.local"}},
		{"not a user's pool: no picker of Serval's", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Pool: &v1alpha2.InferencePoolSpec{Ref: &corev1.LocalObjectReference{Name: "mine"}}}}},
			[]string{"llama-kserve-workload-svc.team.svc", "llama-kserve-workload-svc.team.svc.cluster.local"}},
		{"a pool spec without a picker", v1alpha2.LLMInferenceServiceSpec{Router: &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{
			Pool: &v1alpha2.InferencePoolSpec{Spec: &v1.InferencePoolSpec{}}}}},
			[]string{"llama-epp-service.team.svc", "llama-epp-service.team.svc.cluster.local",
				"llama-kserve-workload-svc.team.svc", "llama-kserve-workload-svc.team.svc.cluster.local"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, llmobjects.CertificateNames(llmobjects.Inputs{Service: svc, Spec: &c.spec}))
		})
	}
}

func TestDownloadServiceAccount(t *testing.T) {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}}
	hf := v1alpha2.LLMModelSpec{URI: "hf://meta-llama/Llama-3.1-8B-Instruct"}
	pvc := v1alpha2.LLMModelSpec{URI: "pvc://models/llama"}
	for _, c := range []struct {
		name   string
		spec   v1alpha2.LLMInferenceServiceSpec
		sa     string
		loaded bool
	}{
		{"a download, the default ServiceAccount", v1alpha2.LLMInferenceServiceSpec{Model: hf}, "default", true},
		{"the template's ServiceAccount", v1alpha2.LLMInferenceServiceSpec{Model: hf,
			WorkloadSpec: v1alpha2.WorkloadSpec{Template: &corev1.PodSpec{ServiceAccountName: "downloader"}}}, "downloader", true},
		{"a claim: nothing downloaded", v1alpha2.LLMInferenceServiceSpec{Model: pvc}, "", false},
		{"an OCI image: nothing downloaded", v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "oci://registry/llama:1"}}, "", false},
		{"a claim with an adapter to download", v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "pvc://models/llama",
			LoRA: &v1alpha2.LoRASpec{Adapters: []v1alpha2.LLMModelSpec{{URI: "s3://adapters/sql"}}}}}, "default", true},
		{"the storage initializer off", v1alpha2.LLMInferenceServiceSpec{Model: hf,
			StorageInitializer: &v1alpha2.StorageInitializerSpec{Enabled: new(bool)}}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sa, ok := llmobjects.DownloadServiceAccount(llmobjects.Inputs{Service: svc, Spec: &c.spec})
			assert.Equal(t, c.sa, sa)
			assert.Equal(t, c.loaded, ok)
		})
	}
}
