package webhook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// TestDomainTemplateReadingALabel: a domain template that reads a label
// admits an InferenceService that has it and names the missing label's
// effect for one that does not.
func TestDomainTemplateReadingALabel(t *testing.T) {
	cfg, errs := config.Parse(map[string]string{"ingress.domainTemplate": "{{ .Name }}.{{ .Labels.team }}.{{ .IngressDomain }}"})
	require.Empty(t, errs)
	isvc := func(labels map[string]string) *v1beta1.InferenceService {
		return &v1beta1.InferenceService{ObjectMeta: metav1.ObjectMeta{Name: "iris", Namespace: "models", Labels: labels},
			Spec: v1beta1.InferenceServiceSpec{Predictor: v1beta1.PredictorSpec{Model: &v1beta1.ModelSpec{
				ModelFormat: v1beta1.ModelFormat{Name: "sklearn"}, PredictorExtensionSpec: v1beta1.PredictorExtensionSpec{StorageURI: ptr.To("gs://b/m")}}}}}
	}
	assert.Empty(t, configRules(isvc(map[string]string{"team": "fraud"}), cfg, nil))
	got := configRules(isvc(nil), cfg, nil)
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Error(), `ingress.domainTemplate reads a label or annotation this InferenceService does not have (the host renders as "iris.<no value>.example.com"): add it`)
}
