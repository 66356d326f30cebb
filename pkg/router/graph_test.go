package router_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/router"
)

func TestValidate(t *testing.T) {
	svc := func(name string) v1alpha1.InferenceStep {
		return v1alpha1.InferenceStep{InferenceTarget: v1alpha1.InferenceTarget{ServiceName: name}}
	}
	tests := []struct {
		name  string
		nodes map[string]v1alpha1.InferenceRouter
		want  []string
	}{
		{"a valid graph", map[string]v1alpha1.InferenceRouter{
			"root":  {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{svc("a"), with(nodeStep("split"), response)}},
			"split": {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{with(svc("b"), weight(30)), with(url("http://c.default"), weight(70))}},
		}, nil},
		{"no root", map[string]v1alpha1.InferenceRouter{"start": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{svc("a")}}},
			[]string{`spec.nodes: a node named "root" is required: every request enters there`}},
		{"an unknown router type and no steps", map[string]v1alpha1.InferenceRouter{"root": {RouterType: "Fanout"}},
			[]string{`spec.nodes.root.routerType: "Fanout" is not a router type; use Sequence, Splitter, Ensemble or Switch`,
				"spec.nodes.root.steps: a node needs at least one step"}},
		{"two targets, and none", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{
			{InferenceTarget: v1alpha1.InferenceTarget{ServiceName: "a", ServiceURL: "http://a"}}, {}}}},
			[]string{"spec.nodes.root.steps[0]: set exactly one of nodeName, serviceName and serviceUrl (2 are set)",
				"spec.nodes.root.steps[1]: set exactly one of nodeName, serviceName and serviceUrl (0 are set)"}},
		{"a reference to no node", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{nodeStep("nowhere")}}},
			[]string{`spec.nodes.root.steps[0].nodeName: no node is named "nowhere"`}},
		{"a cycle", map[string]v1alpha1.InferenceRouter{
			"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{nodeStep("a")}},
			"a":    {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{nodeStep("b")}},
			"b":    {RouterType: v1alpha1.Ensemble, Steps: []v1alpha1.InferenceStep{nodeStep("a")}},
		}, []string{"spec.nodes: the nodes form a cycle (a -> b -> a): a request would never end"}},
		{"Splitter weights that do not sum to 100", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{
			with(svc("a"), weight(50)), with(svc("b"), weight(40))}}},
			[]string{"spec.nodes.root.steps: the weights of a Splitter's steps must sum to 100, not 90"}},
		{"a Splitter step without a weight, a weight outside a Splitter", map[string]v1alpha1.InferenceRouter{
			"root":  {RouterType: v1alpha1.Splitter, Steps: []v1alpha1.InferenceStep{with(svc("a"), weight(100)), nodeStep("other")}},
			"other": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{with(svc("a"), weight(100))}},
		}, []string{"spec.nodes.other.steps[0].weight: only a Splitter's steps have weights",
			"spec.nodes.root.steps[1].weight: every step of a Splitter needs a weight"}},
		{"conditions that do not parse", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Switch, Steps: []v1alpha1.InferenceStep{
			with(svc("a"), func(s *v1alpha1.InferenceStep) { s.Condition = `instances.#(kind=="cat"` }),
			with(svc("b"), func(s *v1alpha1.InferenceStep) { s.Condition = `a..b` }),
			with(svc("c"), func(s *v1alpha1.InferenceStep) { s.Condition = `"open` }),
		}}}, []string{`spec.nodes.root.steps[0].condition: "instances.#(kind==\"cat\"" has an unclosed '('`,
			`spec.nodes.root.steps[1].condition: "a..b" has an empty path component`,
			`spec.nodes.root.steps[2].condition: "\"open" has an unclosed quote`}},
		{"a condition outside a Switch or Sequence", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble, Steps: []v1alpha1.InferenceStep{
			with(svc("a"), func(s *v1alpha1.InferenceStep) { s.Condition = `x` })}}},
			[]string{"spec.nodes.root.steps[0].condition: only the steps of a Switch or a Sequence have conditions"}},
		{"$response where there is none", map[string]v1alpha1.InferenceRouter{
			"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{with(svc("a"), response)}},
			"e":    {RouterType: v1alpha1.Ensemble, Steps: []v1alpha1.InferenceStep{with(svc("a"), response)}},
		}, []string{"spec.nodes.e.steps[0].data: $response passes the previous step's response, which only a Sequence has",
			"spec.nodes.root.steps[0].data: the first step of a Sequence has no previous response; use $request"}},
		{"bad data, dependency, URL and duplicate names", map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Sequence, Steps: []v1alpha1.InferenceStep{
			named("x", with(url("ftp://a"), func(s *v1alpha1.InferenceStep) { s.Data = "$body"; s.Dependency = "Strong" })),
			named("x", svc("b")),
		}}}, []string{`spec.nodes.root.steps[0].serviceUrl: "ftp://a" is not an absolute http or https URL`,
			`spec.nodes.root.steps[0].data: "$body" is neither $request nor $response`,
			`spec.nodes.root.steps[0].dependency: "Strong" is neither Soft nor Hard`,
			`spec.nodes.root.steps[1].name: "x" names another step of the node already`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, router.Validate(&v1alpha1.InferenceGraphSpec{Nodes: tt.nodes}))
		})
	}
}

// FuzzCompile feeds graph JSON to the parser and compiler: it must accept
// or reject, never panic, and a graph it accepts must serve a request.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(`{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://127.0.0.1:1/v1/models/m:predict"}]}}}`))
	f.Add([]byte(`{"nodes":{"root":{"routerType":"Switch","steps":[{"nodeName":"e","condition":"instances.#(x>1)"}]},"e":{"routerType":"Ensemble","steps":[{"serviceUrl":"http://127.0.0.1:1"}]}}}`))
	f.Add([]byte(`{"nodes":{"root":{"routerType":"Splitter","steps":[{"serviceUrl":"http://127.0.0.1:1","weight":100}]}},"timeout":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := router.Parse(data)
		if err != nil {
			return
		}
		if _, err := router.Compile(spec, router.Options{}, nil); err != nil && len(router.Validate(spec)) == 0 && !strings.Contains(err.Error(), "is not resolved to a URL") {
			t.Fatalf("Compile failed on a graph Validate accepts: %v", err)
		}
	})
}

// FuzzCheckCondition: a condition either fails the check or evaluates
// against any JSON without a panic.
func FuzzCheckCondition(f *testing.F) {
	for _, c := range []string{`instances.#(kind=="cat")`, `a.b`, `predictions.0`, `x.#(y>1)#`, `"open`, `a..b`, `@this`} {
		f.Add(c, `{"instances":[{"kind":"cat"}],"predictions":[1]}`)
	}
	f.Fuzz(func(t *testing.T, cond, doc string) {
		if router.CheckCondition(cond) != nil {
			return
		}
		_ = router.Match([]byte(doc), cond)
	})
}
