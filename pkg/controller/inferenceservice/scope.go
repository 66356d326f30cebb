package inferenceservice

import (
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
	"github.com/serval-dev/serval/pkg/runtime"
)

// scope carries one reconcile's state from phase to phase.
type scope struct {
	// isvc is the object as read; orig is kept to compare the status with.
	isvc *v1beta1.InferenceService
	orig *v1beta1.InferenceService
	// defaulted is a defaulted copy, for reading the spec.
	defaulted *v1beta1.InferenceService
	// history is what the status remembers, read once.
	history history

	cfg       *config.Config
	cfgErrors []config.KeyError
	// templateFailure says, for ConfigValid, that the ingress templates
	// render an invalid host or path for this service, and for how many.
	templateFailure string
	mode            v1beta1.DeploymentMode
	selection       *runtime.Selection
	comps           []*components.Component
	// splits are the predictor's canaries, which share its traffic: those
	// of spec.canary, and the latest revision of canaryTrafficPercent.
	splits []*components.Component
	// canaryRuntimes are the canaries' own runtimes, where theirs differ.
	canaryRuntimes map[string]*runtime.Selection
	// readyCanaries are the canary Deployments with an available replica
	// when the reconcile began.
	readyCanaries map[string]bool
	// revision is the predictor's latest revision (Standard mode), and
	// predictorHash its Deployment's desired state (apply.Object.Hash).
	revision, predictorHash string
	// holdPredictor keeps the predictor's Deployment at the revision last
	// rolled out while canaryTrafficPercent splits traffic.
	holdPredictor bool
	// workload is the mode's implementation, chosen once.
	workload workload.Mode
	// plan is where the InferenceService is reached; router routes it,
	// chosen once.
	plan   *ingress.Plan
	router ingress.Router
	// out is what the child pipeline did and observed: the objects, what
	// the API server refused, each component's workload, the routes.
	out pipeline.Outcome
	// staleRead: a write was refused because Serval's copy of the object
	// was older than the API server's (409 Conflict); the reconcile is
	// retried, quietly.
	staleRead bool
	// failure is a user-facing problem that stopped the reconcile (bad spec,
	// no runtime, adoption conflict); status reports it.
	failure *pipeline.Failure
	// stop ends the phases early, after a failure.
	stop bool
	// stopped: the stop annotation stops the InferenceService.
	stopped bool
	// reconciled is true when every phase ran: observedGeneration may advance.
	reconciled bool
	// recheckSecret: the storage Secret the annotation names does not exist
	// (and is not watched): look again later.
	recheckSecret bool
}

func newScope(isvc *v1beta1.InferenceService) *scope {
	d := isvc.DeepCopy()
	v1beta1.Default(d)
	return &scope{isvc: isvc, orig: isvc.DeepCopy(), defaulted: d, history: readHistory(isvc), stopped: v1beta1.IsStopped(isvc)}
}

// fail records a user-facing failure and stops the phases.
func (s *scope) fail(component v1beta1.ComponentType, reason, message string) {
	s.failure = &pipeline.Failure{Reason: reason, Message: message, Component: component}
	s.stop = true
}
