package webhook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

const bomb = "{{ range 20000000 }}aaaaaaaaaa{{ end }}"

// TestTemplateBombsRefused: every place a namespace user writes a template
// string is rendered at admission within the bounds, and a string that
// passes one is refused by its field; ordinary templates and templates
// that read keys the object lacks are admitted.
func TestTemplateBombsRefused(t *testing.T) {
	limits := strtemplate.DefaultLimits
	runtime := func(value string) *v1alpha1.ServingRuntimeSpec {
		return &v1alpha1.ServingRuntimeSpec{ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
			Name: "kserve-container", Args: []string{"--model_name={{.Name}}", value}}}}}
	}
	got := runtimeTemplateBombs(runtime(bomb), limits)
	require.Len(t, got, 1)
	assert.Equal(t, "spec.containers[0].args[1]", got[0].Field)
	assert.Contains(t, got[0].Error(), "passes the bound of 65536 (serval-config templates.maxOutputBytes)")
	assert.Empty(t, runtimeTemplateBombs(runtime("--x={{.Annotations.absent}}"), limits))

	isvc := &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: "iris", Namespace: "team-a"},
		Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
			ModelFormat: v1beta1.ModelFormat{Name: "sklearn"}, PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{
				StorageURI: ptr.To("gs://b/m"), Container: v1beta1.Container{Env: []corev1.EnvVar{{Name: "X", Value: `{{ printf "%0999999999d" 1 }}`}}}}}}}}
	cfg := config.Default()
	errs := configRules(isvc, cfg, nil)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.predictor.model.env[0].value", errs[0].Field)
	assert.Contains(t, errs[0].Error(), "a printf width or precision of 999999999")

	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llm", Namespace: "team-a"}}
	svc.Spec.Template = &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "X", Value: bomb}},
		Args: []string{"--served-model-name={{ .Spec.Model.Name }}"}}}}
	_, errs = llmTemplateBombs(svc, limits)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.template.containers[0].env[0].value", errs[0].Field)

	// Each string is a template of its own: a range opened in one string
	// and closed in another does not parse.
	svc.Spec.Template.Containers[0].Env = nil
	svc.Spec.Template.Containers[0].Args = []string{"{{ range 20000000 }}", "aaaaaaaaaa{{ end }}"}
	_, errs = llmTemplateBombs(svc, limits)
	require.Len(t, errs, 2)
	assert.Equal(t, "spec.template.containers[0].args[0]", errs[0].Field)
	assert.Contains(t, errs[0].Error(), "does not parse as a template (each string is a template of its own)")

	// Strings that each stay within the bound but together pass it are
	// refused at spec: they share one budget.
	svc.Spec.Template.Containers[0].Args = []string{"{{ range 5000 }}aaaaaaaaaa{{ end }}", "{{ range 5000 }}aaaaaaaaaa{{ end }}"}
	_, errs = llmTemplateBombs(svc, limits)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec", errs[0].Field)
	assert.Contains(t, errs[0].Error(), "serval-config templates.maxOutputBytes")

	svc.Spec.Template.Containers[0].Args = []string{"--served-model-name={{ .Spec.Model.Name }}", "{{ ChildName .ObjectMeta.Name \"-x\" }}"}
	rendered, errs := llmTemplateBombs(svc, limits)
	assert.Empty(t, errs)
	assert.Equal(t, []string{"--served-model-name=<nil>", "llm-x"}, rendered.Template.Containers[0].Args)
}

// TestTemplateLimitsFromConfig: the bounds are serval-config's.
func TestTemplateLimitsFromConfig(t *testing.T) {
	cfg, errs := config.Parse(map[string]string{"templates.maxOutputBytes": "1Ki"})
	require.Empty(t, errs)
	got := runtimeTemplateBombs(&v1alpha1.ServingRuntimeSpec{ServingRuntimePodSpec: v1alpha1.ServingRuntimePodSpec{Containers: []corev1.Container{{
		Name: "c", Command: []string{"{{ range 200 }}aaaaaa{{ end }}"}}}}}, cfg.Templates)
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Error(), "passes the bound of 1024")
	_, errs = config.Parse(map[string]string{"templates.maxOutputBytes": "1Gi", "templates.maxSteps": "0"})
	assert.Len(t, errs, 2)
}
