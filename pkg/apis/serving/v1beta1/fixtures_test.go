package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// option changes a fixture.
type option func(*InferenceService)

// makeISVC returns a valid sklearn InferenceService changed by opts.
func makeISVC(opts ...option) *InferenceService {
	isvc := &InferenceService{
		ObjectMeta: metav1.ObjectMeta{Name: "iris", Namespace: "default"},
		Spec: InferenceServiceSpec{Predictor: PredictorSpec{Model: &ModelSpec{
			ModelFormat:            ModelFormat{Name: "sklearn"},
			PredictorExtensionSpec: PredictorExtensionSpec{StorageURI: ptr.To("gs://models/iris")},
		}}},
	}
	for _, o := range opts {
		o(isvc)
	}
	return isvc
}

func withName(name string) option { return func(i *InferenceService) { i.Name = name } }

func withAnnotation(k, v string) option {
	return func(i *InferenceService) {
		if i.Annotations == nil {
			i.Annotations = map[string]string{}
		}
		i.Annotations[k] = v
	}
}

func withTransformer() option {
	return func(i *InferenceService) {
		i.Spec.Transformer = &TransformerSpec{PodSpec: PodSpec{Containers: []corev1.Container{{Name: "t", Image: "t:1"}}}}
	}
}

func withPredictor(f func(p *PredictorSpec)) option {
	return func(i *InferenceService) { f(&i.Spec.Predictor) }
}

func withLegacySKLearn() option {
	return withPredictor(func(p *PredictorSpec) {
		p.Model = nil
		p.SKLearn = &PredictorExtensionSpec{StorageURI: ptr.To("gs://models/iris")}
	})
}

var appsv1DeploymentStrategyRecreate = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}

func rawJSON(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }
