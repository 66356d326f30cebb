package serving

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// ServiceKind is a kind of service a user serves through: its name and
// its empty list and object, for readers of every service kind alike (the
// condition metric, the console).
type ServiceKind struct {
	Name    string
	NewList func() client.ObjectList
	New     func() client.Object
}

// ServiceKinds are the service kinds: InferenceService, InferenceGraph and
// LLMInferenceService. Each has status conditions (Service).
var ServiceKinds = []ServiceKind{
	{"InferenceService", func() client.ObjectList { return &v1beta1.InferenceServiceList{} }, func() client.Object { return &v1beta1.InferenceService{} }},
	{"InferenceGraph", func() client.ObjectList { return &v1alpha1.InferenceGraphList{} }, func() client.Object { return &v1alpha1.InferenceGraph{} }},
	{"LLMInferenceService", func() client.ObjectList { return &v1alpha2.LLMInferenceServiceList{} }, func() client.Object { return &v1alpha2.LLMInferenceService{} }},
}

// Service is an object of a service kind.
type Service interface {
	client.Object
	GetConditions() []metav1.Condition
}
