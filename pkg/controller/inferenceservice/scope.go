package inferenceservice

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scope carries one reconcile's state from phase to phase.
type scope struct {
	// isvc is the object as read; orig is kept to compare the status with.
	isvc *v1beta1.InferenceService
	orig *v1beta1.InferenceService
	// defaulted is a defaulted copy, for reading the spec.
	defaulted *v1beta1.InferenceService

	cfg       *config.Config
	cfgErrors []config.KeyError
	// templateFailure says, for ConfigValid, that the ingress templates
	// render an invalid host or path for this service, and for how many.
	templateFailure string
	mode            v1beta1.DeploymentMode
	selection       *runtime.Selection
	comps           []*components.Component
	objects         []apply.Object
	// producedBy names the component each workload object belongs to, by
	// apply.Object.String(); routes belong to none.
	producedBy map[string]v1beta1.ComponentType
	// workload is the mode's implementation, chosen once; observed is its
	// view of each component.
	workload workload.Mode
	observed map[v1beta1.ComponentType]workload.State

	// plan is where the InferenceService is reached; router routes it,
	// chosen once; missingRouteKind is a kind the router needs whose CRD the
	// cluster lacks (nothing is routed then); routes is the routes' state.
	plan             *ingress.Plan
	router           ingress.Router
	missingRouteKind *kinds.Kind
	routes           ingress.Readiness

	// applyFailures are the children that could not be applied, by the
	// component that rendered them ("" for routes); what exists is still
	// observed, and status reports the failures.
	applyFailures map[v1beta1.ComponentType]apply.Failure
	// staleRead: a write was refused because Serval's copy of the object
	// was older than the API server's (409 Conflict); the reconcile is
	// retried, quietly.
	staleRead bool
	// reader is what the observe phase reads children from: the cache,
	// plus the children this reconcile created.
	reader client.Reader

	// failure is a user-facing problem that stopped the reconcile (bad spec,
	// no runtime, adoption conflict); status reports it.
	failure *failure
	// stop ends the phases early, after a failure.
	stop bool
	// reconciled is true when every phase ran: observedGeneration may advance.
	reconciled bool
}

// failure is a problem for the user, reported in conditions and modelStatus.
type failure struct {
	reason  string
	message string
	// component is the component the failure belongs to, if any.
	component v1beta1.ComponentType
}

func newScope(isvc *v1beta1.InferenceService) *scope {
	d := isvc.DeepCopy()
	v1beta1.Default(d)
	return &scope{isvc: isvc, orig: isvc.DeepCopy(), defaulted: d}
}

// fail records a user-facing failure and stops the phases.
func (s *scope) fail(component v1beta1.ComponentType, reason, message string) {
	s.failure = &failure{reason: reason, message: message, component: component}
	s.stop = true
}

// childReader is the reader of children for the observe phase: the cache,
// and what this reconcile created, if the apply phase ran.
func (s *scope) childReader(cache client.Reader) client.Reader {
	if s.reader != nil {
		return s.reader
	}
	return cache
}
