package webhook

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-inferencegraph,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=inferencegraphs,verbs=create;update,versions=v1alpha1,name=inferencegraph.validate.serving.serval.dev,admissionReviewVersions=v1

// InferenceGraph validates InferenceGraphs: a root node, references that
// resolve, no cycles, Splitter weights summing to 100, one target per step,
// conditions that parse, and a depth and a number of step calls per request
// within Limits.
type InferenceGraph struct {
	Limits v1alpha1.GraphLimits
}

var _ admission.Validator[*v1alpha1.InferenceGraph] = InferenceGraph{}

// ValidateCreate implements admission.Validator.
func (g InferenceGraph) ValidateCreate(_ context.Context, ig *v1alpha1.InferenceGraph) (admission.Warnings, error) {
	if errs := v1alpha1.ValidateInferenceGraph(ig, g.Limits); len(errs) > 0 {
		return nil, apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("InferenceGraph").GroupKind(), ig.Name, errs)
	}
	return nil, nil
}

// ValidateUpdate implements admission.Validator. An update that leaves the
// spec and annotations as they were (a label, a finalizer) is never
// refused for a rule the object broke before.
func (g InferenceGraph) ValidateUpdate(ctx context.Context, old, ig *v1alpha1.InferenceGraph) (admission.Warnings, error) {
	if equalSpecAndMode(old, ig) {
		return nil, nil
	}
	return g.ValidateCreate(ctx, ig)
}

// ValidateDelete implements admission.Validator.
func (InferenceGraph) ValidateDelete(context.Context, *v1alpha1.InferenceGraph) (admission.Warnings, error) {
	return nil, nil
}

func equalSpecAndMode(a, b *v1alpha1.InferenceGraph) bool {
	return apiequality.Semantic.DeepEqual(a.Spec, b.Spec) &&
		a.Annotations[v1beta1.DeploymentModeAnnotation] == b.Annotations[v1beta1.DeploymentModeAnnotation]
}
