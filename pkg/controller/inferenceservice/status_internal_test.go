package inferenceservice

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/pipeline"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// got returns the condition t of a status, as type/status/reason.
func got(st *v1beta1.InferenceServiceStatus, t string) string {
	c := meta.FindStatusCondition(st.Conditions, t)
	if c == nil {
		return "absent"
	}
	return string(c.Status) + "/" + c.Reason
}

func rejected() apply.Failure {
	obj := apply.Object{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Key: types.NamespacedName{Namespace: "ns", Name: "m-predictor"}}
	return apply.Failure{Object: obj, Err: apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "m-predictor",
		field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be greater than or equal to 0")})}
}

func forbidden() apply.Failure {
	f := rejected()
	f.Err = apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "m-predictor", errors.New("denied by policy"))
	return f
}

func missingService() apply.Failure {
	obj := apply.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, Key: types.NamespacedName{Namespace: "ns", Name: "m-predictor"}}
	return apply.Failure{Object: obj, Missing: true, Err: apierrors.NewInternalError(errors.New("failed to allocate a serviceIP: range is full"))}
}

func TestSetComponentReadyCondition(t *testing.T) {
	tests := []struct {
		name     string
		obs      workload.State
		failures map[v1beta1.ComponentType]apply.Failure
		want     string
		message  string
	}{
		{"serving", workload.State{Available: true}, nil, "True/Available", ""},
		{"not yet", workload.State{NotAvailableMessage: "the Deployment does not exist yet"}, nil, "False/NotAvailable", "the Deployment does not exist yet"},
		{"a failing pod says why", workload.State{Problem: &workload.PodProblem{Pod: "p", Container: "c", Reason: "CrashLoopBackOff"}}, nil,
			"False/NotAvailable", "pod p: container c: CrashLoopBackOff"},
		{"refused and not serving", workload.State{}, map[v1beta1.ComponentType]apply.Failure{v1beta1.PredictorComponent: rejected()},
			"False/ApplyRejected", "the API server refused Deployment ns/m-predictor: "},
		{"refused but still serving on the old spec", workload.State{Available: true},
			map[v1beta1.ComponentType]apply.Failure{v1beta1.PredictorComponent: rejected()}, "True/Available", ""},
		{"forbidden", workload.State{}, map[v1beta1.ComponentType]apply.Failure{v1beta1.PredictorComponent: forbidden()},
			"False/ApplyForbidden", "denied by policy"},
		{"a replica serves, but its Service could not be created", workload.State{Available: true},
			map[v1beta1.ComponentType]apply.Failure{v1beta1.PredictorComponent: missingService()}, "False/ApplyFailed", "range is full"},
		{"another component's failure is not this one's", workload.State{Available: true},
			map[v1beta1.ComponentType]apply.Failure{v1beta1.TransformerComponent: rejected()}, "True/Available", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &v1beta1.InferenceServiceStatus{}
			setComponentReadyCondition(st, v1beta1.PredictorComponent, tt.obs, tt.failures, 1)
			assert.Equal(t, tt.want, got(st, v1beta1.ConditionPredictorReady))
			assert.Contains(t, meta.FindStatusCondition(st.Conditions, v1beta1.ConditionPredictorReady).Message, tt.message)
		})
	}
}

func TestSetLatestDeploymentReadyCondition(t *testing.T) {
	comps := []*components.Component{{Type: v1beta1.PredictorComponent, PodSet: components.PodSet{Name: "m-predictor"}}, {Type: v1beta1.TransformerComponent, PodSet: components.PodSet{Name: "m-transformer"}}}
	tests := []struct {
		name     string
		observed map[v1beta1.ComponentType]workload.State
		failures map[v1beta1.ComponentType]apply.Failure
		want     string
		message  string
	}{
		{"all rolled out", map[v1beta1.ComponentType]workload.State{"predictor": {RolledOut: true}, "transformer": {RolledOut: true}}, nil,
			"True/RolledOut", ""},
		{"a rollout in progress", map[v1beta1.ComponentType]workload.State{"predictor": {RolledOut: true}, "transformer": {RolloutMessage: "the latest spec is rolling out"}},
			nil, "False/Progressing", "m-transformer: the latest spec is rolling out"},
		{"a failing rollout", map[v1beta1.ComponentType]workload.State{"predictor": {RolloutFailed: true, RolloutMessage: "pod p: container c: ErrImagePull"}},
			nil, "False/RolloutFailed", "m-predictor: pod p: container c: ErrImagePull"},
		{"a refused spec is not rolled out", map[v1beta1.ComponentType]workload.State{"predictor": {RolledOut: true}, "transformer": {RolledOut: true}},
			map[v1beta1.ComponentType]apply.Failure{v1beta1.PredictorComponent: rejected()}, "False/ApplyRejected", "m-predictor: the API server refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &v1beta1.InferenceServiceStatus{}
			setLatestDeploymentReadyCondition(st, comps, tt.observed, tt.failures, 1)
			assert.Equal(t, tt.want, got(st, v1beta1.ConditionLatestDeploymentReady))
			assert.Contains(t, meta.FindStatusCondition(st.Conditions, v1beta1.ConditionLatestDeploymentReady).Message, tt.message)
		})
	}
}

func TestSetModelStatus(t *testing.T) {
	unschedulable := &workload.PodProblem{Pod: "p", Reason: "Unschedulable", Msg: "0/4 nodes are available"}
	crashing := &workload.PodProblem{Pod: "p", Container: "storage-initializer", Reason: "CrashLoopBackOff", ExitCode: 1}
	tests := []struct {
		name       string
		obs        workload.State
		active     v1beta1.ModelState
		transition v1beta1.TransitionStatus
		failure    v1beta1.FailureReason
	}{
		{"pending", workload.State{}, v1beta1.ModelPending, v1beta1.TransitionInProgress, ""},
		{"loading", workload.State{Loading: true}, v1beta1.ModelLoading, v1beta1.TransitionInProgress, ""},
		{"loaded", workload.State{Available: true, RolledOut: true}, v1beta1.ModelLoaded, v1beta1.TransitionUpToDate, ""},
		{"failed to load", workload.State{Problem: crashing}, v1beta1.ModelFailedToLoad, v1beta1.TransitionBlockedByFailedLoad, v1beta1.ModelLoadFailed},
		{"an old copy serves while the new one fails", workload.State{Available: true, Problem: crashing}, v1beta1.ModelLoaded,
			v1beta1.TransitionBlockedByFailedLoad, v1beta1.ModelLoadFailed},
		{"unschedulable is not a load failure", workload.State{Problem: unschedulable}, v1beta1.ModelPending, v1beta1.TransitionInProgress, v1beta1.PodUnschedulable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &v1beta1.InferenceServiceStatus{}
			setModelStatus(st, tt.obs)
			assert.Equal(t, tt.active, st.ModelStatus.States.ActiveModelState)
			assert.Equal(t, tt.transition, st.ModelStatus.TransitionStatus)
			if tt.failure == "" {
				assert.Nil(t, st.ModelStatus.LastFailureInfo)
			} else {
				assert.Equal(t, tt.failure, st.ModelStatus.LastFailureInfo.Reason)
			}
		})
	}
}

func TestSetIngressReadyCondition(t *testing.T) {
	missing := kinds.Kind{CRD: "virtualservices.networking.istio.io", Install: "install Istio"}
	missing.GVK.Kind = "VirtualService"
	tests := []struct {
		name string
		s    *scope
		want string
	}{
		{"routes ready", &scope{out: pipeline.Outcome{Routes: ingress.Readiness{Ready: true, Reason: v1beta1.ReasonRoutesReady}}}, "True/RoutesReady"},
		{"routes waiting", &scope{out: pipeline.Outcome{Routes: ingress.Readiness{Reason: v1beta1.ReasonRouteNotReady, Message: "no Gateway"}}}, "False/RouteNotReady"},
		{"the router's CRD missing", &scope{out: pipeline.Outcome{MissingRouteKind: &missing}}, "False/MissingCRD"},
		{"a route refused", &scope{out: pipeline.Outcome{Routes: ingress.Readiness{Ready: true, Reason: v1beta1.ReasonIngressCreated},
			ApplyFailures: map[v1beta1.ComponentType]apply.Failure{"": rejected()}}}, "False/ApplyRejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &v1beta1.InferenceServiceStatus{}
			setIngressReadyCondition(st, tt.s, 1)
			assert.Equal(t, tt.want, got(st, v1beta1.ConditionIngressReady))
		})
	}
}

func TestSetReadyCondition(t *testing.T) {
	isvc := &v1beta1.InferenceService{}
	isvc.Spec.Transformer = &v1beta1.TransformerSpec{}
	withConditions := func(conds ...metav1.Condition) *v1beta1.InferenceServiceStatus {
		return &v1beta1.InferenceServiceStatus{Conditions: conds}
	}
	ok := func(t string) metav1.Condition { return condition(t, true, "Yes", "", 1) }
	no := func(t string) metav1.Condition { return condition(t, false, "No", "why not", 1) }
	tests := []struct {
		name    string
		st      *v1beta1.InferenceServiceStatus
		failure *pipeline.Failure
		want    string
		message string
	}{
		{"all ready", withConditions(ok("IngressReady"), ok("PredictorReady"), ok("TransformerReady")), nil, "True/AllComponentsReady", ""},
		{"the transformer is not", withConditions(ok("IngressReady"), ok("PredictorReady"), no("TransformerReady")), nil,
			"False/ComponentsNotReady", "not ready: TransformerReady (No: why not)"},
		{"a condition never set", withConditions(ok("IngressReady"), ok("PredictorReady")), nil, "False/ComponentsNotReady", "not ready: TransformerReady"},
		{"a rollout does not count", withConditions(ok("IngressReady"), ok("PredictorReady"), ok("TransformerReady"), no("LatestDeploymentReady")), nil,
			"True/AllComponentsReady", ""},
		{"a failure wins", withConditions(ok("IngressReady"), ok("PredictorReady"), ok("TransformerReady")),
			&pipeline.Failure{Reason: "NoSupportingRuntime", Message: "no runtime"}, "False/NoSupportingRuntime", "no runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setReadyCondition(tt.st, isvc, tt.failure, 1)
			assert.Equal(t, tt.want, got(tt.st, v1beta1.ConditionReady))
			assert.Contains(t, meta.FindStatusCondition(tt.st.Conditions, v1beta1.ConditionReady).Message, tt.message)
		})
	}
}

func TestSetFailureConditions(t *testing.T) {
	tests := []struct {
		name      string
		component v1beta1.ComponentType
		condition string
		modelInfo bool
	}{
		{"a predictor failure is the predictor's, and the model's", v1beta1.PredictorComponent, v1beta1.ConditionPredictorReady, true},
		{"a bad transformer is not PredictorReady=False", v1beta1.TransformerComponent, v1beta1.ConditionTransformerReady, false},
		{"a route's failure is IngressReady's", "", v1beta1.ConditionIngressReady, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &v1beta1.InferenceServiceStatus{}
			setFailureConditions(st, &pipeline.Failure{Component: tt.component, Reason: "InvalidSpec", Message: "bad"}, 1)
			assert.Equal(t, "False/InvalidSpec", got(st, tt.condition))
			assert.Len(t, st.Conditions, 1, "only that condition")
			assert.Equal(t, tt.modelInfo, st.ModelStatus.LastFailureInfo != nil)
		})
	}
	assert.Equal(t, v1beta1.TransformerComponent, componentOfField("spec.transformer.containers[0].name"))
	assert.Equal(t, v1beta1.ExplainerComponent, componentOfField("spec.explainer.minReplicas"))
	assert.Equal(t, v1beta1.PredictorComponent, componentOfField("metadata.annotations[serving.serval.dev/deploymentMode]"))
}

func TestStatusConditionsWithoutPhases(t *testing.T) {
	// An error before the children were observed keeps the last observed
	// conditions: no empty reason, no condition invented.
	isvc := &v1beta1.InferenceService{}
	isvc.Status.Conditions = []metav1.Condition{condition(v1beta1.ConditionPredictorReady, true, v1beta1.ReasonAvailable, "", 1),
		condition(v1beta1.ConditionIngressReady, true, v1beta1.ReasonIngressCreated, "", 1)}
	s := newScope(isvc)
	s.cfg = config.Default()
	st := computeStatus(s)
	assert.Equal(t, "True/Available", got(&st, v1beta1.ConditionPredictorReady))
	for _, c := range st.Conditions {
		assert.NotEmpty(t, c.Reason, "condition %s", c.Type)
	}
	assert.Equal(t, "True/AllComponentsReady", got(&st, v1beta1.ConditionReady))
}

func TestSetUndecodableCondition(t *testing.T) {
	st := &v1beta1.InferenceServiceStatus{Conditions: []metav1.Condition{condition(v1beta1.ConditionPredictorReady, true, v1beta1.ReasonAvailable, "", 1)}}
	setUndecodableCondition(st, "spec.predictor.containers[0].env[0].value: cannot unmarshal number", 2)
	assert.Equal(t, "False/UndecodableSpec", got(st, v1beta1.ConditionReady))
	assert.Equal(t, "True/Available", got(st, v1beta1.ConditionPredictorReady), "the rest is kept as last observed")
}
