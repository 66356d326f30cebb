package v1alpha2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the LLM API.
	GroupVersion = schema.GroupVersion{Group: "serving.serval.dev", Version: "v1alpha2"}
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&LLMInferenceService{}, &LLMInferenceServiceList{},
		&LLMInferenceServiceConfig{}, &LLMInferenceServiceConfigList{})
}
