package inferenceservice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/components"
	"github.com/serval-dev/serval/pkg/runtime"
)

func (r *Reconciler) loadConfig(ctx context.Context, s *scope) error {
	cfg, errs, err := r.Config.Snapshot(ctx)
	if err != nil {
		return err
	}
	s.cfg, s.cfgErrors = cfg, errs
	s.mode = effectiveMode(s.isvc, cfg.DefaultDeploymentMode)
	return nil
}

// validate applies the webhook's rules, against the mode in force: an object
// that bypassed the webhook is reported rather than half-deployed.
func (r *Reconciler) validate(_ context.Context, s *scope) error {
	opts := v1beta1.ValidationOptions{DefaultDeploymentMode: s.cfg.DefaultDeploymentMode, DeployedMode: s.mode}
	if verr := v1beta1.Validate(s.defaulted, opts); len(verr) > 0 {
		// The webhook rejects these; an object that bypassed it is reported.
		s.fail(v1beta1.PredictorComponent, string(v1beta1.InvalidPredictorSpec), verr.ToAggregate().Error())
		return nil
	}
	return nil
}

// effectiveMode is the mode in status once deployed (it never changes), else
// the annotation's or the configured default.
func effectiveMode(isvc *v1beta1.InferenceService, def v1beta1.DeploymentMode) v1beta1.DeploymentMode {
	if m, ok := v1beta1.NormalizeDeploymentMode(string(isvc.Status.DeploymentMode)); ok {
		return m
	}
	return v1beta1.DeploymentModeOf(isvc, def)
}

func (r *Reconciler) selectRuntime(ctx context.Context, s *scope) error {
	req := components.RuntimeRequest(s.defaulted)
	if req == nil {
		return nil
	}
	req.Previous = previousSelection(s.isvc)
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
	return nil
}

// previousSelection is the runtime in status, kept while the spec is
// unchanged since it was chosen (stickiness).
func previousSelection(isvc *v1beta1.InferenceService) *runtime.Previous {
	st := isvc.Status
	if st.ObservedGeneration != isvc.Generation || st.ProtocolVersion == "" {
		return nil
	}
	switch {
	case st.ServingRuntimeName != "":
		return &runtime.Previous{Name: st.ServingRuntimeName, Namespaced: true, Protocol: st.ProtocolVersion}
	case st.ClusterServingRuntimeName != "":
		return &runtime.Previous{Name: st.ClusterServingRuntimeName, Protocol: st.ProtocolVersion}
	}
	return nil
}

func (r *Reconciler) resolveComponents(ctx context.Context, s *scope) error {
	secrets, err := r.serviceAccountSecrets(ctx, s.defaulted)
	if err != nil {
		return err
	}
	comps, err := components.Build(components.Inputs{
		ISVC: s.isvc, Config: s.cfg, Mode: s.mode, Runtime: s.selection, ServiceAccountSecrets: secrets,
	})
	var buildErr *components.BuildError
	if errors.As(err, &buildErr) {
		s.fail(buildErr.Component, string(buildErr.Reason), buildErr.Message)
		return nil
	}
	if err != nil {
		return err
	}
	s.comps = comps
	return nil
}

// serviceAccountSecrets fetches the Secrets attached to the predictor's
// ServiceAccount, for storage credentials. Only a download storage URI needs
// them. Both are read uncached: the cache holds no cluster-wide Secrets or
// ServiceAccounts.
func (r *Reconciler) serviceAccountSecrets(ctx context.Context, isvc *v1beta1.InferenceService) (map[string][]corev1.Secret, error) {
	model := isvc.Spec.Predictor.Model
	if model == nil || model.StorageURI == nil || strings.HasPrefix(*model.StorageURI, "pvc://") {
		return nil, nil
	}
	name := isvc.Spec.Predictor.ServiceAccountName
	if name == "" {
		name = "default"
	}
	sa := &corev1.ServiceAccount{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: isvc.Namespace, Name: name}, sa); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var secrets []corev1.Secret
	for _, ref := range sa.Secrets {
		secret := &corev1.Secret{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: isvc.Namespace, Name: ref.Name}, secret)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read Secret %s of ServiceAccount %s: %w", ref.Name, name, err)
		}
		secrets = append(secrets, *secret)
	}
	return map[string][]corev1.Secret{name: secrets}, nil
}

func (r *Reconciler) applyObjects(ctx context.Context, s *scope) error {
	err := r.Applier.Apply(ctx, s.isvc.UID, s.objects)
	var conflict *apply.ConflictError
	if errors.As(err, &conflict) {
		r.Recorder.Eventf(s.isvc, nil, corev1.EventTypeWarning, v1beta1.ReasonConflict, "Apply", conflict.Error())
		// A route belongs to no component: its conflict is reported on IngressReady.
		s.fail(s.producedBy[conflict.Object.String()], v1beta1.ReasonConflict, conflict.Error())
		return nil
	}
	if err != nil {
		return err
	}
	deleted, err := r.Applier.Prune(ctx, apply.PruneScope{
		Namespace: s.isvc.Namespace,
		Labels:    map[string]string{v1beta1.InferenceServiceLabel: s.isvc.Name},
		Owner:     s.isvc.UID,
		Kinds:     r.watches.PresentGVKs(),
	}, s.objects)
	for _, d := range deleted {
		r.Recorder.Eventf(s.isvc, nil, corev1.EventTypeNormal, "Pruned", "Prune", "deleted %s, no longer desired", d)
	}
	return err
}
