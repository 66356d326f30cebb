package llminferenceservice

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/servingcert"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// producers are the service's producers, in the order they render: each
// model workload and its autoscaler, what the routing sidecars and the
// serving certificate need, the picker and its pool, the tokenizer, and
// the routes.
func (r *Reconciler) producers(s *scope, cert servingcert.Bundle) []pipeline.Producer {
	var out []pipeline.Producer
	for _, part := range llmobjects.Parts(s.spec) {
		p := &partState{Part: part}
		s.parts = append(s.parts, p)
		out = append(out, partProducer{s: s, p: p}, scalingProducer{s: s, p: p})
	}
	out = append(out, extrasProducer{s: s, cert: cert})
	var router []pipeline.Producer
	if llmobjects.HasScheduler(s.spec) {
		router = append(router, schedulerProducer{s: s})
	}
	if llmobjects.HasTokenizer(s.spec) {
		router = append(router, tokenizerProducer{s: s})
	}
	router = append(router, routesProducer{r: r, s: s}, bindingProducer{s: s})
	if s.refsInvalid != "" {
		for i := range router {
			router[i] = held{router[i]}
		}
	}
	return append(out, router...)
}

// bindingProducer is the managed picker's cluster binding to
// system:auth-delegator (KServe's {namespace}-{name}-epp-auth-rb), after
// the picker it binds; it prunes the service's bindings by their owner
// label, which the garbage collector cannot (see BindingFinalizer). Its
// run is also the stopped service's, which renders nothing.
type bindingProducer struct{ s *scope }

func (b bindingProducer) Component() v1beta1.ComponentType { return llmobjects.Scheduler }

func (b bindingProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	if !wantsBinding(b.s) || b.s.scheduler == nil {
		return nil, nil, nil
	}
	return []apply.Object{llmobjects.AuthDelegatorBinding(b.s.svc, b.s.scheduler.Pod.ServiceAccountName)}, nil, nil
}

func (bindingProducer) Absent(*kinds.Kind) *pipeline.Failure         { return nil }
func (bindingProducer) Observe(context.Context, client.Reader) error { return nil }
func (b bindingProducer) PruneScopes() []apply.PruneScope {
	return []apply.PruneScope{llmobjects.AuthDelegatorScope(b.s.svc)}
}

// wantsBinding says whether the service's picker gets the binding: a
// picker Serval makes (not a pool of the user's), of a running service,
// with serval-config's llm.pickerAuthDelegator on.
func wantsBinding(s *scope) bool {
	return s.authDelegator && !s.stopped && s.spec != nil && llmobjects.HasScheduler(s.spec)
}

// held is a producer whose live objects are kept as they are, none
// created, written or pruned, and nothing read back: the router's parts
// while router.gateway.refs name a missing Gateway (KServe stops before
// the scheduler; what runs keeps running).
type held struct{ pipeline.Producer }

func (h held) Render() ([]apply.Object, *pipeline.Failure, error) {
	objs, failure, err := h.Producer.Render()
	for i := range objs {
		objs[i].Kept = true
	}
	return objs, failure, err
}

func (h held) Absent(*kinds.Kind) *pipeline.Failure         { return nil }
func (h held) Observe(context.Context, client.Reader) error { return nil }

// stop records a failure of the service's spec on a condition and stops
// the run.
func (s *scope) stop(condition, reason, message string) *pipeline.Failure {
	s.fail(condition, reason, message)
	return &pipeline.Failure{Reason: reason, Message: message}
}

// leaveOut records that the objects of kind k are left out, their CRD
// being absent: condition says which CRD and what to install. The run
// goes on.
func (s *scope) leaveOut(condition string, k *kinds.Kind) *pipeline.Failure {
	s.missing[condition] = k.MissingMessage("")
	return nil
}

// partProducer is one model workload: its Deployment or LeaderWorkerSet,
// and the main part's Service.
type partProducer struct {
	s *scope
	p *partState
}

func (pp partProducer) Component() v1beta1.ComponentType { return pp.p.Component() }

func (pp partProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	s, p := pp.s, pp.p
	w, err := llmobjects.WorkloadComponent(s.inputs, p.Part)
	if buildErr := (*components.BuildError)(nil); errors.As(err, &buildErr) {
		return nil, s.stop(p.Condition(), string(buildErr.Reason), buildErr.Message), nil
	}
	if err != nil {
		return nil, s.stop(p.Condition(), "InvalidWorkload", err.Error()), nil
	}
	p.workload = w
	objs, err := llmobjects.WorkloadObjects(s.inputs, w)
	if err != nil {
		return nil, s.stop(p.Condition(), "InvalidWorkload", err.Error()), nil
	}
	return objs, nil, nil
}

// Absent: the workload's own kind (a LeaderWorkerSet) is missing; the
// part's condition says so.
func (pp partProducer) Absent(k *kinds.Kind) *pipeline.Failure {
	return pp.s.leaveOut(pp.p.Condition(), k)
}

func (pp partProducer) Observe(ctx context.Context, r client.Reader) error {
	return observePart(ctx, r, pp.s, pp.p)
}

// scalingProducer is a model workload's autoscaler: an HPA or a KEDA
// ScaledObject, none without scaling or when the workload's kind is
// missing.
type scalingProducer struct {
	s *scope
	p *partState
}

func (sp scalingProducer) Component() v1beta1.ComponentType { return sp.p.Component() }

func (sp scalingProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	s, p := sp.s, sp.p
	if _, missing := s.missing[p.Condition()]; missing {
		return nil, nil, nil
	}
	objs, err := llmobjects.ScalingObjects(s.inputs, p.Part)
	switch {
	case errors.Is(err, llmobjects.ErrNoPrometheus):
		return nil, s.stop(p.ScalingCondition(), "InvalidConfig", err.Error()), nil
	case err != nil:
		return nil, s.stop(p.ScalingCondition(), "InvalidScaling", err.Error()), nil
	}
	return objs, nil, nil
}

// Absent: the autoscaler's kind (KEDA's) is missing; the workload runs at
// its replicas, and the scaling condition says why.
func (sp scalingProducer) Absent(k *kinds.Kind) *pipeline.Failure {
	return sp.s.leaveOut(sp.p.ScalingCondition(), k)
}

func (sp scalingProducer) Observe(ctx context.Context, r client.Reader) error {
	s, p := sp.s, sp.p
	if p.Spec.Scaling == nil || p.state == nil {
		return nil
	}
	if _, missing := s.missing[p.ScalingCondition()]; missing {
		return nil
	}
	var err error
	p.scaling, err = observeScaling(ctx, r, s, p)
	return err
}

// extrasProducer is what the model workloads share: the routing sidecars'
// ServiceAccount and bindings, the ResourceClaimTemplate of managed device
// allocation, and the serving certificate's Secret.
type extrasProducer struct {
	s    *scope
	cert servingcert.Bundle
}

func (ep extrasProducer) Component() v1beta1.ComponentType { return llmobjects.Workload }

func (ep extrasProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	workloads := make([]*llmobjects.PartWorkload, 0, len(ep.s.parts))
	for _, p := range ep.s.parts {
		workloads = append(workloads, p.workload)
	}
	objs := llmobjects.SidecarObjects(ep.s.inputs, workloads)
	objs = append(objs, llmobjects.DRAObjects(ep.s.inputs)...)
	return append(objs, llmobjects.CertificateObject(ep.s.inputs, ep.cert)), nil, nil
}

func (ep extrasProducer) Absent(*kinds.Kind) *pipeline.Failure         { return nil }
func (ep extrasProducer) Observe(context.Context, client.Reader) error { return nil }

// schedulerProducer is the endpoint picker (its Deployment, Service,
// ServiceAccount and binding) and the InferencePool it serves (read back
// with the routes, as a pool of the user's is).
type schedulerProducer struct{ s *scope }

func (sp schedulerProducer) Component() v1beta1.ComponentType { return llmobjects.Scheduler }

func (sp schedulerProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	s := sp.s
	c, err := llmobjects.SchedulerComponent(s.inputs)
	if err != nil {
		return nil, nil, fmt.Errorf("render the scheduler: %w", err)
	}
	s.scheduler = c
	objs, err := llmobjects.SchedulerObjects(s.inputs, c)
	if err != nil {
		return nil, nil, fmt.Errorf("render the scheduler: %w", err)
	}
	return objs, nil, nil
}

// Absent: the InferencePool's kind is missing; the picker runs, and the
// pool's condition says why.
func (sp schedulerProducer) Absent(k *kinds.Kind) *pipeline.Failure {
	return sp.s.leaveOut(v1alpha2.ConditionInferencePoolReady, k)
}

func (sp schedulerProducer) Observe(ctx context.Context, r client.Reader) error {
	st, err := standard.Mode{}.Observe(ctx, r, sp.s.scheduler)
	if err != nil {
		return err
	}
	sp.s.schedulerState = &st
	return nil
}

// tokenizerProducer is the standalone tokenizer's Deployment and Service.
type tokenizerProducer struct{ s *scope }

func (tp tokenizerProducer) Component() v1beta1.ComponentType { return llmobjects.Tokenizer }

func (tp tokenizerProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	s := tp.s
	c, err := llmobjects.TokenizerComponent(s.inputs)
	if buildErr := (*components.BuildError)(nil); errors.As(err, &buildErr) {
		return nil, s.stop(v1alpha2.ConditionTokenizerReady, string(buildErr.Reason), buildErr.Message), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("render the tokenizer: %w", err)
	}
	s.tokenizer = c
	objs, err := llmobjects.TokenizerObjects(s.inputs, c)
	if err != nil {
		return nil, nil, fmt.Errorf("render the tokenizer: %w", err)
	}
	return objs, nil, nil
}

func (tp tokenizerProducer) Absent(*kinds.Kind) *pipeline.Failure { return nil }

func (tp tokenizerProducer) Observe(ctx context.Context, r client.Reader) error {
	st, err := standard.Mode{}.Observe(ctx, r, tp.s.tokenizer)
	if err != nil {
		return err
	}
	tp.s.tokenizerState = &st
	return nil
}

// routesProducer is the managed HTTPRoute (none when the user brings
// routes, or none are asked for); it reads back what routes to the model
// pods, Serval's or the user's: the InferencePool, the routes, their
// Gateways, and the Ingresses.
type routesProducer struct {
	r *Reconciler
	s *scope
}

func (rp routesProducer) Component() v1beta1.ComponentType { return "" }

func (rp routesProducer) Render() ([]apply.Object, *pipeline.Failure, error) {
	if !llmobjects.HasManagedRoute(rp.s.inputs) {
		return nil, nil, nil
	}
	route, err := llmobjects.RouteObject(rp.s.inputs)
	if err != nil {
		return nil, nil, fmt.Errorf("render the route: %w", err)
	}
	return []apply.Object{route}, nil, nil
}

// Absent: Gateway API's CRDs are missing; the routes' condition says so.
func (rp routesProducer) Absent(k *kinds.Kind) *pipeline.Failure {
	return rp.s.leaveOut(v1alpha2.ConditionHTTPRoutesReady, k)
}

func (rp routesProducer) Observe(ctx context.Context, r client.Reader) error {
	if err := rp.r.observePool(ctx, r, rp.s); err != nil {
		return err
	}
	if err := rp.r.observeRoutes(ctx, r, rp.s); err != nil {
		return err
	}
	return rp.r.observeIngresses(ctx, rp.s)
}
