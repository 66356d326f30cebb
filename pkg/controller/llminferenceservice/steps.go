package llminferenceservice

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/cabundle"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
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

// render renders the children of the combined spec; a kind whose CRD is
// missing is reported on its condition and not rendered.
func (r *Reconciler) render(ctx context.Context, s *scope, cfg *config.Config) error {
	si := cfg.StorageInitializer
	s.inputs = llmobjects.Inputs{Service: s.defaulted, Spec: s.spec, TLS: cfg.Ingress.EnableLLMTLS, Autoscaling: cfg.LLMAutoscaling,
		Storage: storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()}}
	mc, waiting, err := localmodel.Resolve(ctx, r.Client, s.spec.Model.URI, s.svc.Namespace, s.svc.Annotations)
	if err != nil {
		return err
	}
	if waiting != nil {
		s.fail(v1alpha2.ConditionMainWorkloadReady, waiting.Reason, waiting.Message)
		return nil
	}
	s.inputs.ModelCache = mc
	if sa, ok := llmobjects.DownloadServiceAccount(s.inputs); ok {
		if name := si.CABundleConfigMapName; name != "" {
			err := r.caBundles.Ensure(ctx, s.svc.Namespace, name)
			var problem *cabundle.Problem
			if errors.As(err, &problem) {
				s.fail(v1alpha2.ConditionMainWorkloadReady, "InvalidConfig", problem.Message)
				return nil
			}
			if err != nil {
				return err
			}
		}
		secrets, err := r.credentials.ServiceAccountSecrets(ctx, r.APIReader, types.NamespacedName{Namespace: s.svc.Namespace, Name: sa})
		if err != nil {
			return err
		}
		s.inputs.Credentials = storage.Credentials{ServiceAccountSecrets: secrets}
	}
	s.out.ProducedBy = map[string]v1beta1.ComponentType{}
	add := func(component v1beta1.ComponentType, os ...apply.Object) {
		for _, o := range os {
			s.out.ProducedBy[o.String()] = component
		}
		s.out.Objects = append(s.out.Objects, os...)
	}
	var workloads []*llmobjects.PartWorkload
	for _, part := range llmobjects.Parts(s.spec) {
		w, objs, ok, err := r.renderPart(s, part)
		if err != nil || !ok {
			return err
		}
		s.parts = append(s.parts, &partState{Part: part, workload: w})
		workloads = append(workloads, w)
		add(part.Component(), objs...)
	}
	add(llmobjects.Workload, llmobjects.SidecarObjects(s.inputs, workloads)...)
	cert, err := r.certs.For(ctx, llmobjects.CertificateKey(s.inputs), s.svc.UID, llmobjects.CertificateNames(s.inputs))
	if err != nil {
		return err
	}
	add(llmobjects.Workload, llmobjects.CertificateObject(s.inputs, cert))
	if llmobjects.HasScheduler(s.spec) {
		if s.scheduler, err = llmobjects.SchedulerComponent(s.inputs); err != nil {
			return fmt.Errorf("render the scheduler: %w", err)
		}
		objs, err := llmobjects.SchedulerObjects(s.inputs, s.scheduler)
		if err != nil {
			return fmt.Errorf("render the scheduler: %w", err)
		}
		objs, k := r.pipeline.Gate(objs)
		if k != nil {
			s.missing[v1alpha2.ConditionInferencePoolReady] = missingMessage(k)
		}
		add(llmobjects.Scheduler, objs...)
	}
	if llmobjects.HasTokenizer(s.spec) {
		c, err := llmobjects.TokenizerComponent(s.inputs)
		var buildErr *components.BuildError
		if errors.As(err, &buildErr) {
			s.fail(v1alpha2.ConditionTokenizerReady, string(buildErr.Reason), buildErr.Message)
			return nil
		}
		if err != nil {
			return fmt.Errorf("render the tokenizer: %w", err)
		}
		s.tokenizer = c
		objs, err := llmobjects.TokenizerObjects(s.inputs, c)
		if err != nil {
			return fmt.Errorf("render the tokenizer: %w", err)
		}
		add(llmobjects.Tokenizer, objs...)
	}
	if llmobjects.HasManagedRoute(s.inputs) {
		if err := r.resolveGroup(ctx, s); err != nil {
			return err
		}
		route, err := llmobjects.RouteObject(s.inputs)
		if err != nil {
			return fmt.Errorf("render the route: %w", err)
		}
		objs, k := r.pipeline.Gate([]apply.Object{route})
		if k != nil {
			s.missing[v1alpha2.ConditionHTTPRoutesReady] = missingMessage(k)
		}
		add("", objs...)
	}
	return nil
}

// renderPart renders one model workload: its pods, its Deployment or
// LeaderWorkerSet and its autoscaler. ok is false when the service's spec
// cannot be rendered (a condition says why); a kind whose CRD is missing
// is left out and reported on the part's condition.
func (r *Reconciler) renderPart(s *scope, part llmobjects.Part) (*llmobjects.PartWorkload, []apply.Object, bool, error) {
	w, err := llmobjects.WorkloadComponent(s.inputs, part)
	var buildErr *components.BuildError
	if errors.As(err, &buildErr) {
		s.fail(part.Condition(), string(buildErr.Reason), buildErr.Message)
		return nil, nil, false, nil
	}
	if err != nil {
		s.fail(part.Condition(), "InvalidWorkload", err.Error())
		return nil, nil, false, nil
	}
	objs, err := llmobjects.WorkloadObjects(s.inputs, w)
	var scalingErr *llmobjects.ScalingError
	switch {
	case errors.Is(err, llmobjects.ErrNoPrometheus):
		s.fail(part.ScalingCondition(), "InvalidConfig", err.Error())
		return nil, nil, false, nil
	case errors.As(err, &scalingErr):
		s.fail(part.ScalingCondition(), "InvalidScaling", err.Error())
		return nil, nil, false, nil
	case err != nil:
		s.fail(part.Condition(), "InvalidWorkload", err.Error())
		return nil, nil, false, nil
	}
	kept, k := r.pipeline.Gate(objs)
	switch {
	case k == nil:
	case k.GVK == objs[0].GVK:
		// The workload's own kind (a LeaderWorkerSet): nothing of the
		// part is made.
		s.missing[part.Condition()] = missingMessage(k)
		return w, nil, true, nil
	default:
		// Its autoscaler's (a KEDA ScaledObject): the workload runs at
		// its replicas.
		s.missing[part.ScalingCondition()] = missingMessage(k)
	}
	return w, kept, true, nil
}

// missingMessage says which CRD is missing and what to install.
func missingMessage(k *kinds.Kind) string {
	return fmt.Sprintf("the CRD %s is not installed; %s", k.CRD, k.Install)
}
