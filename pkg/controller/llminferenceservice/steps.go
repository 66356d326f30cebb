package llminferenceservice

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/credentials"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/storage"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// DefaultModelRoutingHeader is the header a shared Gateway routes on by
// model, KServe's default.
const DefaultModelRoutingHeader = "X-Gateway-Model-Name"

// ReasonTemplateLimit is PresetsCombined's reason when a template of the
// service or a preset passed a bound of serval-config templates.*.
const ReasonTemplateLimit = "TemplateLimitExceeded"

// combine merges the service with its presets; PresetsCombined says how it
// went.
func (r *Reconciler) combine(ctx context.Context, s *scope, cfg *config.Config) error {
	g := presets.Global{
		SystemNamespace:    r.Namespace,
		IngressGatewayName: cfg.Ingress.Gateway.Name, IngressGatewayNamespace: cfg.Ingress.Gateway.Namespace,
		ModelBasedRoutingHeaderName: DefaultModelRoutingHeader, EnableTLS: cfg.Ingress.EnableLLMTLS,
		TemplateLimits: cfg.Templates,
	}
	src := source{cache: r.Client, namespace: s.svc.Namespace, system: r.Namespace}
	res, err := presets.Combine(ctx, s.defaulted, src, g, []string{s.svc.Namespace, r.Namespace})
	var notFound *presets.NotFoundError
	var read *presets.ReadError
	var limit *strtemplate.LimitError
	switch {
	case errors.As(err, &read):
		return err
	case errors.As(err, &notFound):
		s.fail(v1alpha2.ConditionPresetsCombined, "ConfigNotFound", notFound.Error())
		return nil
	case errors.As(err, &limit):
		s.fail(v1alpha2.ConditionPresetsCombined, ReasonTemplateLimit, err.Error())
		return nil
	case err != nil:
		s.fail(v1alpha2.ConditionPresetsCombined, "CombineBaseError", err.Error())
		return nil
	}
	s.applied, s.spec = res.Applied, &res.Spec
	errs := v1alpha2.ValidateCombined(s.spec, s.defaulted.ModelName())
	if errs = append(errs, storage.CheckURIs(v1alpha2.StorageURIs(s.spec))...); len(errs) > 0 {
		s.fail(v1alpha2.ConditionPresetsCombined, "InvalidRenderedConfig", fmt.Sprintf(
			"the spec merged from [%s] is invalid: %s", fmtApplied(res.Applied), errs.ToAggregate().Error()))
	}
	return nil
}

// prepare reads what rendering needs beyond the spec and serval-config:
// the model cache the model is on, the download credentials, the CA
// bundle's copy, the serving certificate and the routing group. ok is
// false when the service waits or its config is wrong (a condition says
// why).
func (r *Reconciler) prepare(ctx context.Context, s *scope, cfg *config.Config) (cert servingcert.Bundle, ok bool, err error) {
	si := cfg.StorageInitializer
	s.inputs = llmobjects.Inputs{Service: s.defaulted, Spec: s.spec, TLS: cfg.Ingress.EnableLLMTLS, Autoscaling: cfg.LLMAutoscaling, Activator: cfg.Activator.ScalerAddress,
		Storage: storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()}}
	mc, waiting, err := localmodel.Resolve(ctx, r.Client, s.spec.Model.URI, s.svc.Namespace, s.svc.Annotations)
	if err != nil {
		return cert, false, err
	}
	if waiting != nil {
		s.fail(v1alpha2.ConditionMainWorkloadReady, waiting.Reason, waiting.Message)
		return cert, false, nil
	}
	s.inputs.ModelCache = mc
	if missing, err := r.missingAccount(ctx, s); err != nil || missing {
		return cert, false, err
	}
	if sa, ok := llmobjects.DownloadServiceAccount(s.inputs); ok {
		if name := si.CABundleConfigMapName; name != "" {
			err := r.caBundles.Ensure(ctx, s.svc.Namespace, name)
			var problem *cabundle.Problem
			if errors.As(err, &problem) {
				s.fail(v1alpha2.ConditionMainWorkloadReady, "InvalidConfig", problem.Message)
				return cert, false, nil
			}
			if err != nil {
				return cert, false, err
			}
		}
		secrets, err := r.credentials.ServiceAccountSecrets(ctx, r.APIReader, types.NamespacedName{Namespace: s.svc.Namespace, Name: sa})
		if err != nil {
			return cert, false, err
		}
		s.inputs.Credentials = storage.Credentials{ServiceAccountSecrets: secrets}
	}
	cert, err = r.certs.For(ctx, llmobjects.CertificateKey(s.inputs), s.svc.UID, llmobjects.CertificateNames(s.inputs))
	if err != nil {
		return cert, false, err
	}
	if llmobjects.HasManagedRoute(s.inputs) {
		if err := r.resolveGroup(ctx, s); err != nil {
			return cert, false, err
		}
	}
	return cert, true, r.checkGatewayRefs(ctx, s)
}

// ReasonServiceAccountNotFound is a workload's reason when its pod
// template names a ServiceAccount that does not exist: no pod of it could
// be created, so none is asked for.
const ReasonServiceAccountNotFound = "ServiceAccountNotFound"

// ServiceAccountRecheckInterval is how often a service whose template
// names a missing ServiceAccount looks for it again (ServiceAccounts are
// not watched; the read is remembered for credentials.TTL).
const ServiceAccountRecheckInterval = credentials.TTL

// missingAccount fails the first part whose pod templates (the leader's or
// the workers') name a ServiceAccount that does not exist, naming it; the
// accounts Serval makes for the service are not looked for.
func (r *Reconciler) missingAccount(ctx context.Context, s *scope) (bool, error) {
	own := llmobjects.SidecarServiceAccountName(s.svc.Name)
	for _, p := range llmobjects.Parts(s.spec) {
		for i, pod := range []*corev1.PodSpec{p.Spec.Template, p.Spec.Worker} {
			field := []string{"template", "worker"}[i]
			if pod == nil || pod.ServiceAccountName == "" || pod.ServiceAccountName == own {
				continue
			}
			found, err := r.credentials.ServiceAccountExists(ctx, r.APIReader, types.NamespacedName{Namespace: s.svc.Namespace, Name: pod.ServiceAccountName})
			if err != nil || found {
				if err != nil {
					return false, err
				}
				continue
			}
			where := "spec." + field
			if p.Prefill {
				where = "spec.prefill." + field
			}
			s.fail(p.Condition(), ReasonServiceAccountNotFound, fmt.Sprintf(
				"%s.serviceAccountName names the ServiceAccount %s, which does not exist in namespace %s: no pod could be created; create it, or name another",
				where, pod.ServiceAccountName, s.svc.Namespace))
			s.accountMissing = true
			return true, nil
		}
	}
	return false, nil
}

// ReasonRefsInvalid is GatewaysReady's reason when router.gateway.refs
// name a Gateway that does not exist (KServe's).
const ReasonRefsInvalid = "RefsInvalid"

// checkGatewayRefs reads the Gateways router.gateway.refs name (uncached:
// they are not Serval's) and records in the scope those that do not exist.
func (r *Reconciler) checkGatewayRefs(ctx context.Context, s *scope) error {
	rt := s.spec.Router
	if rt == nil || rt.Gateway == nil {
		return nil
	}
	var missing []string
	for _, ref := range rt.Gateway.Refs {
		key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
		if key.Namespace == "" {
			key.Namespace = s.svc.Namespace
		}
		gw, err := r.readGateway(ctx, s, key)
		switch {
		case err != nil:
			return err
		case gw == nil:
			missing = append(missing, "Gateway "+key.String()+" does not exist")
		}
	}
	s.refsInvalid = strings.Join(missing, "; ")
	return nil
}

// readGateway reads a Gateway (uncached: Gateways are not Serval's), once
// per reconcile: the refs' check and the routes' observation ask for the
// same ones. A Gateway that does not exist is nil.
func (r *Reconciler) readGateway(ctx context.Context, s *scope, key types.NamespacedName) (*gatewayv1.Gateway, error) {
	if gw, ok := s.gatewaysRead[key]; ok {
		return gw, nil
	}
	gw := &gatewayv1.Gateway{}
	err := r.APIReader.Get(ctx, key, gw)
	switch {
	case apierrors.IsNotFound(err):
		gw = nil
	case err != nil:
		return nil, fmt.Errorf("read Gateway %s: %w", key, err)
	}
	if s.gatewaysRead == nil {
		s.gatewaysRead = map[types.NamespacedName]*gatewayv1.Gateway{}
	}
	s.gatewaysRead[key] = gw
	return gw, nil
}
