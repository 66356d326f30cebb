package webhook

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
	"github.com/serval-dev/serval/pkg/storage"
)

// +kubebuilder:webhook:path=/mutate-serving-serval-dev-v1beta1-inferenceservice,mutating=true,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=inferenceservices,verbs=create;update,versions=v1beta1,name=inferenceservice.mutate.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1beta1-inferenceservice,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=inferenceservices,verbs=create;update,versions=v1beta1,name=inferenceservice.validate.serving.serval.dev,admissionReviewVersions=v1

// InferenceService defaults and validates InferenceServices.
type InferenceService struct {
	Config *config.Store
	// Reader lists the ClusterStorageContainers, which may download a URI
	// of a scheme Serval does not know; nil: none.
	Reader client.Reader
}

// storageContainers lists the cluster's ClusterStorageContainers.
func (w *InferenceService) storageContainers(ctx context.Context) ([]v1alpha1.ClusterStorageContainer, error) {
	if w.Reader == nil {
		return nil, nil
	}
	list := &v1alpha1.ClusterStorageContainerList{}
	if err := w.Reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ClusterStorageContainers: %w", err)
	}
	return list.Items, nil
}

var (
	_ admission.Defaulter[*v1beta1.InferenceService] = &InferenceService{}
	_ admission.Validator[*v1beta1.InferenceService] = &InferenceService{}
)

// Default implements admission.Defaulter: the API package's defaulting, plus
// the configured default resources for containers Serval does not resolve
// from a runtime (custom predictors, transformers, explainers). A model's
// server keeps the runtime's resources, so none are set on it here.
func (w *InferenceService) Default(ctx context.Context, isvc *v1beta1.InferenceService) error {
	if isvc.DecodeError != "" {
		// Defaulting a spec that did not decode would send back a patch that
		// empties it; reject it here with the reason instead.
		return invalid(isvc, strictErrors(ctx, isvc))
	}
	cfg, _, err := w.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	v1beta1.Default(isvc)
	for _, c := range isvc.Spec.Components() {
		if c == v1beta1.PredictorComponent && !isvc.Spec.Predictor.IsCustom() {
			continue
		}
		pod := isvc.Spec.Pod(c)
		if len(pod.Containers) > 0 {
			first := &pod.Containers[0]
			if len(first.Resources.Requests) == 0 && len(first.Resources.Limits) == 0 {
				first.Resources = *cfg.DefaultResources.DeepCopy()
			}
		}
	}
	return nil
}

// ValidateCreate implements admission.Validator.
func (w *InferenceService) ValidateCreate(ctx context.Context, isvc *v1beta1.InferenceService) (admission.Warnings, error) {
	cfg, _, err := w.Config.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	scs, err := w.storageContainers(ctx)
	if err != nil {
		return nil, err
	}
	errs := strictErrors(ctx, isvc)
	if isvc.DecodeError == "" {
		errs = append(errs, validate(isvc, cfg, scs)...)
		kedaErrs, err := w.zeroNeedsKEDA(ctx, isvc, cfg)
		if err != nil {
			return nil, err
		}
		errs = append(errs, kedaErrs...)
	}
	return v1beta1.StopWarnings(isvc.Annotations), invalid(isvc, errs)
}

// zeroNeedsKEDA refuses a Standard-mode component with minReplicas 0 when
// KEDA's CRD is not installed: nothing would scale it from zero.
func (w *InferenceService) zeroNeedsKEDA(ctx context.Context, isvc *v1beta1.InferenceService, cfg *config.Config) (field.ErrorList, error) {
	mode := v1beta1.DeploymentModeOf(isvc, cfg.DefaultDeploymentMode)
	if w.Reader == nil || mode != v1beta1.Standard || v1beta1.AutoscalerClassOf(isvc, mode) != v1beta1.AutoscalerKEDA {
		return nil, nil
	}
	var zero []v1beta1.ComponentType
	for _, c := range isvc.Spec.Components() {
		if m := isvc.Spec.Extension(c).MinReplicas; m != nil && *m == 0 {
			zero = append(zero, c)
		}
	}
	if len(zero) == 0 {
		return nil, nil
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	switch err := w.Reader.Get(ctx, client.ObjectKey{Name: standard.ScaledObjectKind.CRD}, crd); {
	case err == nil:
		return nil, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("look for KEDA's CRD: %w", err)
	}
	var errs field.ErrorList
	for _, c := range zero {
		errs = append(errs, field.Invalid(field.NewPath("spec", string(c), "minReplicas"), 0,
			"scale to zero in Standard mode needs KEDA, and its CRD "+standard.ScaledObjectKind.CRD+" is not installed: install KEDA (https://keda.sh/docs/deploy/), or set minReplicas 1"))
	}
	return errs, nil
}

// ValidateUpdate implements admission.Validator. Rules ratchet: a problem the
// old object already had does not block an unrelated update.
func (w *InferenceService) ValidateUpdate(ctx context.Context, old, isvc *v1beta1.InferenceService) (admission.Warnings, error) {
	cfg, _, err := w.Config.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	errs := strictErrors(ctx, isvc)
	if isvc.DecodeError != "" {
		return nil, invalid(isvc, errs)
	}
	scs, err := w.storageContainers(ctx)
	if err != nil {
		return nil, err
	}
	errs = append(errs, v1beta1.ValidateUpdate(old, isvc, v1beta1.ValidationOptions{DefaultDeploymentMode: cfg.DefaultDeploymentMode})...)
	errs = append(errs, v1beta1.Ratchet(configRules(old, cfg, scs), configRules(isvc, cfg, scs))...)
	oldKEDA, err := w.zeroNeedsKEDA(ctx, old, cfg)
	if err != nil {
		return nil, err
	}
	newKEDA, err := w.zeroNeedsKEDA(ctx, isvc, cfg)
	if err != nil {
		return nil, err
	}
	errs = append(errs, v1beta1.Ratchet(oldKEDA, newKEDA)...)
	// A stop annotation is set by an update that leaves the spec.
	return v1beta1.StopWarnings(isvc.Annotations), invalid(isvc, errs)
}

// ValidateDelete implements admission.Validator; deletes are never blocked.
func (w *InferenceService) ValidateDelete(context.Context, *v1beta1.InferenceService) (admission.Warnings, error) {
	return nil, nil
}

func validate(isvc *v1beta1.InferenceService, cfg *config.Config, scs []v1alpha1.ClusterStorageContainer) field.ErrorList {
	errs := v1beta1.Validate(isvc, v1beta1.ValidationOptions{DefaultDeploymentMode: cfg.DefaultDeploymentMode})
	return append(errs, configRules(isvc, cfg, scs)...)
}

// configRules are the rules that need the object and the cluster's
// settings: the storage URI (which a ClusterStorageContainer may serve)
// and the hosts the domain template renders.
func configRules(isvc *v1beta1.InferenceService, cfg *config.Config, scs []v1alpha1.ClusterStorageContainer) field.ErrorList {
	errs := storageRules(&isvc.Spec.Predictor, field.NewPath("spec", "predictor"), scs)
	errs = append(errs, predictorTemplateBombs(field.NewPath("spec", "predictor"), &isvc.Spec.Predictor, isvc, cfg.Templates)...)
	for i := range isvc.Spec.Canary {
		path := field.NewPath("spec", "canary").Index(i).Child("predictor")
		errs = append(errs, storageRules(&isvc.Spec.Canary[i].Predictor, path, scs)...)
		errs = append(errs, predictorTemplateBombs(path, &isvc.Spec.Canary[i].Predictor, isvc, cfg.Templates)...)
	}
	if v1beta1.IsClusterLocal(isvc) || cfg.Ingress.DisableIngressCreation || isvc.Namespace == "" {
		return errs
	}
	names := []string{isvc.Name}
	for _, c := range isvc.Spec.Components() {
		names = append(names, v1beta1.ChildName(isvc.Name, c))
	}
	for _, n := range names {
		host, err := cfg.Ingress.Host(n, isvc.Namespace, config.Meta{Labels: isvc.Labels, Annotations: isvc.Annotations})
		if err != nil {
			continue
		}
		if strings.Contains(host, config.NoValue) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels"), isvc.Labels,
				fmt.Sprintf("ingress.domainTemplate reads a label or annotation this InferenceService does not have (the host renders as %q): add it", host)))
			break
		}
		for _, msg := range config.HostProblems(host) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), isvc.Name,
				fmt.Sprintf("the host %q (ingress.domainTemplate) is not valid: %s; shorten the name or the namespace", host, msg)))
		}
	}
	return errs
}

// invalid turns field errors into the API's Invalid error, whose message
// lists every problem with its field.
func invalid(isvc *v1beta1.InferenceService, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1beta1.GroupVersion.WithKind("InferenceService").GroupKind(), isvc.Name, errs)
}

// storageRules checks a predictor's model URI (known to Serval, or
// served by a ClusterStorageContainer), the storage container it names,
// and storageUris.
func storageRules(p *v1beta1.PredictorSpec, path *field.Path, scs []v1alpha1.ClusterStorageContainer) field.ErrorList {
	var errs field.ErrorList
	if m := p.Model; m != nil && m.StorageURI != nil && *m.StorageURI != "" {
		uri := *m.StorageURI
		sc, err := storage.SelectContainer(uri, ptr.Deref(p.StorageContainerName, ""), scs)
		if err != nil {
			return append(errs, field.Invalid(path.Child("storageContainerName"), ptr.Deref(p.StorageContainerName, ""), err.Error()))
		}
		if _, err := storage.ParseWith(uri, sc != nil); err != nil {
			errs = append(errs, field.Invalid(path.Child("model", "storageUri"), uri, err.Error()))
		}
	}
	return append(errs, storageURIsRules(p.StorageURIs, path.Child("storageUris"))...)
}

// storageUrisRules checks storageUris: each URI, the mount paths (absolute,
// not /, not overlapping), and the plan they make (no OCI image, a common
// parent directory for the downloaded ones).
func storageURIsRules(uris []v1beta1.StorageURISpec, path *field.Path) field.ErrorList {
	if len(uris) == 0 {
		return nil
	}
	var errs field.ErrorList
	entries := make([]storage.Entry, len(uris))
	for i, u := range uris {
		entries[i].MountPath = cmp.Or(u.MountPath, storage.DefaultMountPath)
		loc, err := storage.Parse(u.URI)
		if err != nil {
			errs = append(errs, field.Invalid(path.Index(i).Child("uri"), u.URI, err.Error()))
			continue
		}
		entries[i].Location = loc
	}
	for _, p := range storage.CheckMountPaths(entries) {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: path.String() + p[:strings.Index(p, ":")],
			BadValue: field.OmitValueType{}, Detail: strings.TrimSpace(p[strings.Index(p, ":")+1:])})
	}
	if len(errs) > 0 {
		return errs
	}
	if _, err := storage.MakeMultiPlan(entries, storage.Initializer{}, storage.Credentials{}); err != nil {
		errs = append(errs, field.Invalid(path, field.OmitValueType{}, err.Error()))
	}
	return errs
}
