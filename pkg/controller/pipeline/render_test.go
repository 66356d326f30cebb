package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/ingress"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

var (
	builtInKind = kinds.Kind{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}
	optional    = kinds.Kind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Runner"},
		CRD: "runners.example.com", Install: "install the runner"}
	extra = kinds.Kind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Scaler"},
		CRD: "scalers.example.com", Install: "install the scaler"}
	route = kinds.Kind{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Route"},
		CRD: "routes.example.com", Install: "install the routes"}
)

// testMode is a mode whose workload kind, refusal and extra objects a test
// sets.
type testMode struct {
	workload kinds.Kind
	refusal  *workload.Refusal
	// scaler adds an object of the optional kind extra.
	scaler bool
}

func (m testMode) Name() v1beta1.DeploymentMode { return "Test" }
func (m testMode) Workload() kinds.Kind         { return m.workload }
func (m testMode) Kinds() []kinds.Kind          { return []kinds.Kind{m.workload, extra} }
func (m testMode) Objects(c *components.Component) ([]apply.Object, error) {
	objs := []apply.Object{{GVK: m.workload.GVK, Key: types.NamespacedName{Namespace: "ns", Name: c.Name}}}
	if m.scaler {
		objs = append(objs, apply.Object{GVK: extra.GVK, Key: types.NamespacedName{Namespace: "ns", Name: c.Name}})
	}
	return objs, nil
}
func (m testMode) Observe(context.Context, client.Reader, *components.Component) (workload.State, error) {
	return workload.State{}, nil
}
func (m testMode) Refuse(*components.Component, workload.Cluster) *workload.Refusal { return m.refusal }
func (m testMode) ComponentStatus(*v1beta1.ComponentStatus, v1beta1.ComponentStatus, workload.State) {
}

// testRouter is a router of the optional kind route.
type testRouter struct{ refusal *workload.Refusal }

func (testRouter) Name() string                             { return "test" }
func (testRouter) Kinds() []kinds.Kind                      { return []kinds.Kind{route} }
func (r testRouter) Refuse(*ingress.Plan) *workload.Refusal { return r.refusal }
func (testRouter) Objects(*ingress.Plan) ([]apply.Object, error) {
	return []apply.Object{{GVK: route.GVK, Key: types.NamespacedName{Namespace: "ns", Name: "svc"}}}, nil
}
func (testRouter) Ready(context.Context, client.Reader, *ingress.Plan, workload.State) (ingress.Readiness, error) {
	return ingress.Readiness{}, nil
}

// presentCRDs reports a kind present when it is built in or its CRD is
// among crds.
func presentCRDs(crds ...string) func(kinds.Kind) bool {
	return func(k kinds.Kind) bool { return !k.Optional() || slices.Contains(crds, k.CRD) }
}

// TestRender: the producers of a mode and a router, rendered with the
// optional-CRD gate.
func TestRender(t *testing.T) {
	ref := owner.Ref{Kind: "InferenceGraph", Name: "svc", Namespace: "ns"}
	comps := []*components.Component{{Type: "router", PodSet: components.PodSet{Name: "svc"}}}
	tests := []struct {
		name    string
		present []string
		mode    testMode
		router  ingress.Router
		adjust  func(*components.Component, []apply.Object)
		// want is the failure, or else the kinds rendered and whether the
		// route kind was missing.
		want         *Failure
		wantKinds    []string
		missingRoute bool
	}{
		{name: "a built-in workload, no router", mode: testMode{workload: builtInKind}, wantKinds: []string{"Deployment"}},
		{name: "the mode's workload kind is missing", mode: testMode{workload: optional},
			want: &Failure{Component: "router", Reason: v1beta1.ReasonMissingCRD,
				Message: "the CRD runners.example.com is not installed, and the InferenceGraph uses Test mode; install the runner"}},
		{name: "the mode's workload kind exists", present: []string{"runners.example.com"}, mode: testMode{workload: optional},
			wantKinds: []string{"Runner"}},
		{name: "the mode refuses with its own reason", mode: testMode{workload: builtInKind, refusal: &workload.Refusal{Reason: "NoGPU", Message: "no GPU here"}},
			want: &Failure{Component: "router", Reason: "NoGPU", Message: "no GPU here"}},
		{name: "an optional kind a component asks for is missing", mode: testMode{workload: builtInKind, scaler: true},
			want: &Failure{Component: "router", Reason: v1beta1.ReasonMissingCRD,
				Message: "the CRD scalers.example.com is not installed, and the router needs a Scaler; install the scaler"}},
		{name: "the router's kind is missing: the workload alone", mode: testMode{workload: builtInKind}, router: testRouter{},
			wantKinds: []string{"Deployment"}, missingRoute: true},
		{name: "the router routes", present: []string{"routes.example.com"}, mode: testMode{workload: builtInKind}, router: testRouter{},
			wantKinds: []string{"Deployment", "Route"}},
		{name: "the router refuses with its own reason, on the routes", present: []string{"routes.example.com"}, mode: testMode{workload: builtInKind},
			router: testRouter{refusal: &workload.Refusal{Reason: "NoWeights", Message: "use Gateway API"}},
			want:   &Failure{Reason: "NoWeights", Message: "use Gateway API"}},
		{name: "adjust sees the rendered objects", mode: testMode{workload: builtInKind},
			adjust:    func(_ *components.Component, objs []apply.Object) { Freeze(objs, testMode{workload: builtInKind}) },
			wantKinds: []string{"Deployment (frozen)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out Outcome
			req := Request{Owner: Owner{Ref: ref}, Mode: tt.mode, Components: comps, Router: tt.router, Plan: &ingress.Plan{}, Adjust: tt.adjust}
			present := presentCRDs(tt.present...)
			require.NoError(t, produce(builtIn(&req, present, &out), []kinds.Kind{builtInKind, optional, extra, route}, present, &out))
			assert.Equal(t, tt.want, out.Failure)
			if tt.want != nil {
				return
			}
			var got []string
			for _, o := range out.Objects {
				k := o.GVK.Kind
				if o.Frozen {
					k += " (frozen)"
				}
				got = append(got, k)
			}
			assert.Equal(t, tt.wantKinds, got)
			assert.Equal(t, tt.missingRoute, out.MissingRouteKind != nil)
			assert.Equal(t, v1beta1.ComponentType("router"), out.ProducedBy[out.Objects[0].String()])
		})
	}
}

// testProducer renders objs, or stops with failure; on an absent kind it
// records it and, with stopOnAbsent, stops.
type testProducer struct {
	objs         []apply.Object
	failure      *Failure
	stopOnAbsent bool
	absent       *string
}

func (p testProducer) Component() v1beta1.ComponentType             { return "part" }
func (p testProducer) Render() ([]apply.Object, *Failure, error)    { return p.objs, p.failure, nil }
func (p testProducer) Observe(context.Context, client.Reader) error { return nil }
func (p testProducer) Absent(k *kinds.Kind) *Failure {
	*p.absent = k.CRD
	if p.stopOnAbsent {
		return &Failure{Reason: "Stop", Message: k.CRD}
	}
	return nil
}

// TestProduce: an owner kind's own producers. A producer's failure stops
// the run; an absent kind is the producer's to judge: left out, the rest
// goes on; or the run stops.
func TestProduce(t *testing.T) {
	obj := func(k kinds.Kind, name string) apply.Object {
		return apply.Object{GVK: k.GVK, Key: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	known := []kinds.Kind{builtInKind, optional, extra}
	tests := []struct {
		name      string
		present   []string
		producers func(absent *string) []Producer
		want      *Failure
		wantKinds []string
		absent    string
	}{
		{name: "two producers, all present", present: []string{optional.CRD},
			producers: func(a *string) []Producer {
				return []Producer{testProducer{objs: []apply.Object{obj(builtInKind, "a")}, absent: a},
					testProducer{objs: []apply.Object{obj(optional, "b")}, absent: a}}
			},
			wantKinds: []string{"Deployment", "Runner"}},
		{name: "an absent kind left out, the rest goes on",
			producers: func(a *string) []Producer {
				return []Producer{testProducer{objs: []apply.Object{obj(builtInKind, "a"), obj(optional, "b")}, absent: a},
					Objects("", obj(builtInKind, "c"))}
			},
			wantKinds: []string{"Deployment", "Deployment"}, absent: optional.CRD},
		{name: "an absent kind stops the run",
			producers: func(a *string) []Producer {
				return []Producer{testProducer{objs: []apply.Object{obj(extra, "a")}, stopOnAbsent: true, absent: a}}
			},
			want: &Failure{Reason: "Stop", Message: extra.CRD}, absent: extra.CRD},
		{name: "a producer's failure stops the run before the next renders",
			producers: func(a *string) []Producer {
				return []Producer{testProducer{failure: &Failure{Reason: "Invalid", Message: "no"}, absent: a},
					testProducer{objs: []apply.Object{obj(optional, "b")}, stopOnAbsent: true, absent: a}}
			},
			want: &Failure{Reason: "Invalid", Message: "no"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out Outcome
			var absent string
			require.NoError(t, produce(tt.producers(&absent), known, presentCRDs(tt.present...), &out))
			assert.Equal(t, tt.want, out.Failure)
			assert.Equal(t, tt.absent, absent)
			if tt.want != nil {
				return
			}
			var got []string
			for _, o := range out.Objects {
				got = append(got, o.GVK.Kind)
			}
			assert.Equal(t, tt.wantKinds, got)
		})
	}
}
