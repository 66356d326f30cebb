package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-servingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=servingruntimes,verbs=create;update,versions=v1alpha1,name=servingruntime.validate.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-clusterservingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=clusterservingruntimes,verbs=create;update,versions=v1alpha1,name=clusterservingruntime.validate.serving.serval.dev,admissionReviewVersions=v1

// ServingRuntime validates namespaced runtimes against themselves and the
// other runtimes of their namespace.
type ServingRuntime struct {
	Reader client.Reader
	// Config holds the template bounds (nil: the defaults).
	Config *config.Store
}

// ClusterServingRuntime validates cluster runtimes against themselves and
// the other cluster runtimes.
type ClusterServingRuntime struct {
	Reader client.Reader
	// Config holds the template bounds (nil: the defaults).
	Config *config.Store
}

var (
	_ admission.Validator[*v1alpha1.ServingRuntime]        = &ServingRuntime{}
	_ admission.Validator[*v1alpha1.ClusterServingRuntime] = &ClusterServingRuntime{}
)

// peer is another runtime of the same scope.
type peer struct {
	name string
	spec *v1alpha1.ServingRuntimeSpec
}

// validateRuntime checks a runtime's own spec and, even when the scope holds
// no other runtime yet, every peer for an ambiguous auto-selection.
// A spec that did not decode is reported alone: its other checks would only
// see an empty spec.
func validateRuntime(gk schema.GroupKind, name string, spec *v1alpha1.ServingRuntimeSpec, decoded bool, strictErrs field.ErrorList, peers []peer, limits strtemplate.Limits) error {
	errs := strictErrs
	if !decoded {
		return apierrors.NewInvalid(gk, name, errs)
	}
	errs = append(errs, v1alpha1.ValidateSpec(spec)...)
	errs = append(errs, runtimeTemplateBombs(spec, limits)...)
	for _, p := range peers {
		if p.name == name {
			continue
		}
		if why := v1alpha1.Conflict(spec, p.spec); why != "" {
			errs = append(errs, field.Invalid(field.NewPath("spec", "supportedModelFormats"), name, fmt.Sprintf(
				"%s %s and %s %s %s, so auto-selection between them would be arbitrary; give one a different priority or turn autoSelect off",
				gk.Kind, name, gk.Kind, p.name, why)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// ValidateCreate implements admission.Validator.
func (w *ServingRuntime) ValidateCreate(ctx context.Context, sr *v1alpha1.ServingRuntime) (admission.Warnings, error) {
	peers, err := w.peers(ctx, sr.Namespace)
	if err != nil {
		return nil, err
	}
	return nil, validateRuntime(v1alpha1.GroupVersion.WithKind("ServingRuntime").GroupKind(), sr.Name, &sr.Spec, sr.DecodeError == "", strictErrors(ctx, sr), peers, templateLimits(ctx, w.Config))
}

// ValidateUpdate implements admission.Validator.
func (w *ServingRuntime) ValidateUpdate(ctx context.Context, _, sr *v1alpha1.ServingRuntime) (admission.Warnings, error) {
	return w.ValidateCreate(ctx, sr)
}

// ValidateDelete implements admission.Validator.
func (w *ServingRuntime) ValidateDelete(context.Context, *v1alpha1.ServingRuntime) (admission.Warnings, error) {
	return nil, nil
}

func (w *ServingRuntime) peers(ctx context.Context, namespace string) ([]peer, error) {
	list := &v1alpha1.ServingRuntimeList{}
	if err := w.Reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	peers := make([]peer, len(list.Items))
	for i := range list.Items {
		peers[i] = peer{list.Items[i].Name, &list.Items[i].Spec}
	}
	return peers, nil
}

// ValidateCreate implements admission.Validator.
func (w *ClusterServingRuntime) ValidateCreate(ctx context.Context, csr *v1alpha1.ClusterServingRuntime) (admission.Warnings, error) {
	list := &v1alpha1.ClusterServingRuntimeList{}
	if err := w.Reader.List(ctx, list); err != nil {
		return nil, err
	}
	peers := make([]peer, len(list.Items))
	for i := range list.Items {
		peers[i] = peer{list.Items[i].Name, &list.Items[i].Spec}
	}
	return nil, validateRuntime(v1alpha1.GroupVersion.WithKind("ClusterServingRuntime").GroupKind(), csr.Name, &csr.Spec, csr.DecodeError == "", strictErrors(ctx, csr), peers, templateLimits(ctx, w.Config))
}

// ValidateUpdate implements admission.Validator.
func (w *ClusterServingRuntime) ValidateUpdate(ctx context.Context, _, csr *v1alpha1.ClusterServingRuntime) (admission.Warnings, error) {
	return w.ValidateCreate(ctx, csr)
}

// ValidateDelete implements admission.Validator.
func (w *ClusterServingRuntime) ValidateDelete(context.Context, *v1alpha1.ClusterServingRuntime) (admission.Warnings, error) {
	return nil, nil
}
