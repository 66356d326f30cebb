package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/runtime"
	"github.com/serval-dev/serval/pkg/storage"
)

func (r *Reconciler) loadConfig(ctx context.Context, s *scope) error {
	cfg, errs, err := r.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	s.cfg, s.cfgErrors = cfg, errs
	s.mode = s.history.Mode
	if s.mode == "" {
		s.mode = v1beta1.DeploymentModeOf(s.isvc, cfg.DefaultDeploymentMode)
	}
	return nil
}

// validate applies the webhook's rules, against the mode in force: an object
// that bypassed the webhook is reported rather than half-deployed.
func (r *Reconciler) validate(_ context.Context, s *scope) error {
	opts := v1beta1.ValidationOptions{DefaultDeploymentMode: s.cfg.DefaultDeploymentMode, DeployedMode: s.mode}
	if verr := v1beta1.Validate(s.defaulted, opts); len(verr) > 0 {
		// The webhook rejects these; an object that bypassed it is reported,
		// on the component whose field is wrong.
		s.fail(componentOfField(verr[0].Field), string(v1beta1.InvalidPredictorSpec), verr.ToAggregate().Error())
		return nil
	}
	return nil
}

// componentOfField is the component a field path belongs to: the
// transformer's and explainer's fields are theirs, the rest the predictor's.
func componentOfField(path string) v1beta1.ComponentType {
	for _, t := range []v1beta1.ComponentType{v1beta1.TransformerComponent, v1beta1.ExplainerComponent} {
		if strings.HasPrefix(path, "spec."+string(t)) {
			return t
		}
	}
	return v1beta1.PredictorComponent
}

func (r *Reconciler) selectRuntime(ctx context.Context, s *scope) error {
	req := components.RuntimeRequest(s.defaulted)
	if req == nil {
		return nil
	}
	req.Previous = s.history.Runtime
	runtimes, err := r.listRuntimes(ctx, s.isvc.Namespace)
	if err != nil {
		return err
	}
	sel, err := runtime.Select(*req, runtimes)
	var selErr *runtime.SelectionError
	if errors.As(err, &selErr) {
		s.fail(v1beta1.PredictorComponent, string(selErr.Reason), selErr.Message)
		return nil
	}
	if err != nil {
		return err
	}
	s.selection = sel
	return r.selectCanaryRuntimes(runtimes, req, s)
}

func (r *Reconciler) resolveComponents(ctx context.Context, s *scope) error {
	secrets, err := r.serviceAccountSecrets(ctx, s.defaulted)
	if err != nil {
		return err
	}
	storageConfig, err := r.storageConfig(ctx, s, s.defaulted)
	if err != nil {
		return err
	}
	var imageVolumes components.ImageVolumes
	if r.ImageVolumes != nil && usesNativeOCI(s.defaulted, storage.Initializer{Modelcar: s.cfg.StorageInitializer.Modelcar}) {
		if imageVolumes, err = r.ImageVolumes.Support(ctx, s.isvc.Namespace); err != nil {
			return err
		}
	}
	if name := s.cfg.StorageInitializer.CABundleConfigMapName; name != "" && downloadsModel(s.defaulted) {
		err := r.caBundles.Ensure(ctx, s.isvc.Namespace, name)
		var problem *cabundle.Problem
		if errors.As(err, &problem) {
			s.fail(v1beta1.PredictorComponent, v1beta1.ReasonInvalidConfig, problem.Message)
			return nil
		}
		if err != nil {
			return err
		}
	}
	storageContainers := &v1alpha1.ClusterStorageContainerList{}
	if err := r.Client.List(ctx, storageContainers); err != nil {
		return fmt.Errorf("list ClusterStorageContainers: %w", err)
	}
	modelCache, err := r.modelCache(ctx, s)
	if err != nil || s.stop {
		return err
	}
	comps, err := components.Build(components.Inputs{
		ISVC: s.isvc, Config: s.cfg, Mode: s.mode, Runtime: s.selection, ServiceAccountSecrets: secrets, StorageConfig: storageConfig,
		ImageVolumes: imageVolumes, PreviousRolledOutRevisions: s.history.rolledOutRevisions(),
		CanaryRuntimes: s.canaryRuntimes, ReadyCanaries: s.readyCanaries, StorageContainers: storageContainers.Items,
		ModelCache: modelCache,
	})
	var buildErr *components.BuildError
	if errors.As(err, &buildErr) {
		s.fail(buildErr.Component, string(buildErr.Reason), buildErr.Message)
		return nil
	}
	if err != nil {
		return err
	}
	s.comps, s.splits = nil, nil
	for _, c := range comps {
		if c.Split != nil {
			s.splits = append(s.splits, c)
		} else {
			s.comps = append(s.comps, c)
		}
	}
	return nil
}

// serviceAccountSecrets fetches the Secrets attached to the predictor's
// ServiceAccount, for storage credentials. Only a download storage URI needs
// them. Both are read uncached (the cache holds no cluster-wide Secrets or
// ServiceAccounts) and remembered for a short while (credentials.Memo).
func (r *Reconciler) serviceAccountSecrets(ctx context.Context, isvc *v1beta1.InferenceService) (map[string][]corev1.Secret, error) {
	if uri := components.StorageURIOf(isvc); uri == "" || strings.HasPrefix(uri, "pvc://") {
		return nil, nil
	}
	name := isvc.Spec.Predictor.ServiceAccountName
	if name == "" {
		name = "default"
	}
	key := types.NamespacedName{Namespace: isvc.Namespace, Name: name}
	secrets, err := r.credentials.ServiceAccountSecrets(ctx, r.APIReader, key)
	if err != nil {
		return nil, err
	}
	return map[string][]corev1.Secret{name: secrets}, nil
}

// storageConfig reads the storage-config Secret when the model is given as
// storage: {key, path} without a storageUri: its entry names the bucket.
// Read uncached, by name: the cache holds no Secrets.
func (r *Reconciler) storageConfig(ctx context.Context, s *scope, isvc *v1beta1.InferenceService) (*components.StorageConfig, error) {
	if !readsStorageConfig(isvc) {
		return nil, nil
	}
	name := isvc.Annotations[v1beta1.StorageSecretNameAnnotation]
	if name == "" {
		name = storage.DefaultStorageConfigSecret
	}
	secret := &corev1.Secret{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: isvc.Namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		// storage-config is watched by name; a Secret of another name is
		// looked for again (SecretRecheckInterval).
		s.recheckSecret = name != storage.DefaultStorageConfigSecret
		return &components.StorageConfig{Name: name}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Secret %s: %w", name, err)
	}
	return &components.StorageConfig{Name: name, Data: secret.Data}, nil
}

// downloadsModel: a storage initializer fetches the predictor's model (a
// URI that is not a claim, storageUris, or storage: {key, path}), so its
// CA bundle is needed in the namespace.
func downloadsModel(isvc *v1beta1.InferenceService) bool {
	if uri := components.StorageURIOf(isvc); uri != "" && !strings.HasPrefix(uri, "pvc://") {
		return true
	}
	return len(isvc.Spec.Predictor.StorageURIs) > 0 || readsStorageConfig(isvc)
}

// readsStorageConfig: the predictor's model is given as storage: {key,
// path} without a storageUri, so its bucket is read from the
// storage-config Secret. isvc must be defaulted.
func readsStorageConfig(isvc *v1beta1.InferenceService) bool {
	m := isvc.Spec.Predictor.Model
	return m != nil && m.StorageURI == nil && m.Storage != nil
}
