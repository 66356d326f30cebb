package llminferenceservice

import (
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// scope is one reconcile's state.
type scope struct {
	// svc is the object as read; orig is kept to compare the status with;
	// defaulted is a defaulted copy, for reading the spec.
	svc, orig, defaulted *v1alpha2.LLMInferenceService
	// applied are the presets merged; spec is the combined spec.
	applied []v1alpha2.AppliedConfigRef
	spec    *v1alpha2.LLMInferenceServiceSpec
	inputs  llmobjects.Inputs
	// parts are the model workloads; scheduler and tokenizer are the
	// picker and the standalone tokenizer (nil when there is none).
	parts                []*partState
	scheduler, tokenizer *components.Component
	// out is what the pipeline applied and refused.
	out pipeline.Outcome
	// missing are the conditions whose kind's CRD is absent, with the
	// message: the objects of that kind are not rendered.
	missing map[string]string
	// observed states.
	schedulerState, tokenizerState    *workload.State
	pool, routes, gateways, ingresses *cond
	// group are the members of the service's routing group that share its
	// traffic, divergent those that serve other models; groupWait is the
	// member a deleted service waits for.
	group, divergent []llmobjects.GroupMember
	groupWait        string
	// refsInvalid says which of router.gateway.refs name no Gateway; the
	// router's parts are then held as they are ("" when all exist).
	refsInvalid string
	// accountMissing: a pod template names a ServiceAccount that does not
	// exist (a workload's condition says which); looked for again.
	accountMissing bool
	// gatewaysRead are the Gateways read in this reconcile (nil: none of
	// that name), so that each is read once.
	gatewaysRead map[types.NamespacedName]*gatewayv1.Gateway
	// addresses are the service's addresses through its Gateways.
	addresses []v1alpha2.Address
	// stopped: the stop annotation stops the service; nothing is rendered.
	stopped bool
	// authDelegator says that a managed picker's ServiceAccount is bound
	// to system:auth-delegator (serval-config llm.pickerAuthDelegator).
	authDelegator bool
	// failure stopped the reconcile: its condition, reason and message.
	failure *failure
}

// partState is one model workload: rendered, then observed.
type partState struct {
	llmobjects.Part
	workload *llmobjects.PartWorkload
	// state is the workload's; scaling its autoscaler's (nil without one).
	state   *workload.State
	scaling *cond
}

type failure struct{ condition, reason, message string }

func newScope(svc *v1alpha2.LLMInferenceService) *scope {
	d := svc.DeepCopy()
	if d.DecodeError == "" {
		v1alpha2.Default(d)
	}
	return &scope{svc: svc, orig: svc.DeepCopy(), defaulted: d, missing: map[string]string{}, stopped: v1alpha2.IsStopped(svc)}
}

func (s *scope) fail(condition, reason, message string) {
	s.failure = &failure{condition: condition, reason: reason, message: message}
}

func (s *scope) failed() bool { return s.failure != nil }

// reportable reports whether the reconcile got far enough for a status:
// a failure to report, or a combined spec with its workload rendered (or
// nothing to render, stopped).
func (s *scope) reportable() bool {
	return s.failure != nil || (s.spec != nil && (len(s.parts) > 0 || s.stopped))
}

func (s *scope) owner() pipeline.Owner {
	return pipeline.Owner{Object: s.svc, Ref: owner.OfLLM(s.svc)}
}
