package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

// Graph is an InferenceGraph compiled for serving: nodes linked to their
// steps, URLs parsed, conditions checked, metrics resolved. It is immutable
// and safe for concurrent use.
type Graph struct {
	root  *node
	nodes map[string]*node
	// timeout bounds a whole request (spec.timeout); 0 means none.
	timeout time.Duration
}

type node struct {
	name  string
	typ   v1alpha1.InferenceRouterType
	steps []*step
	// cumulative are a Splitter's cumulative weights, ending at 100.
	cumulative []int64
	// streams: the node passes the request body through to one step as it
	// arrives, without reading it first (see compile).
	streams bool
}

type step struct {
	name      string
	node      *node
	upstream  *upstream
	response  bool // Data is $response
	condition string
	hard      bool
	metrics   stepMetrics
}

// Parse decodes a graph spec from JSON (the router's --graph-json).
func Parse(data []byte) (*v1alpha1.InferenceGraphSpec, error) {
	spec := &v1alpha1.InferenceGraphSpec{}
	if err := json.Unmarshal(data, spec); err != nil {
		return nil, fmt.Errorf("decode the graph: %w", err)
	}
	return spec, nil
}

// Compile checks a graph spec and compiles it. Its errors are the webhook's
// validation messages: every node and step reference resolves, no cycles,
// exactly one target per step, Splitter weights summing to 100, conditions
// that parse.
func Compile(spec *v1alpha1.InferenceGraphSpec, o Options, m *Metrics) (*Graph, error) {
	o = o.withDefaults()
	// The limits admission applies, so that a router started by hand with a
	// graph admission would refuse does not serve it: each request of such
	// a graph costs what the limits exist to prevent.
	problems := v1alpha1.ValidateGraph(spec)
	if len(problems) == 0 {
		problems = v1alpha1.ValidateGraphLimits(spec, v1alpha1.GraphLimits{MaxDepth: o.MaxDepth, MaxStepCalls: o.MaxStepCalls})
	}
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.String()
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	g := &Graph{nodes: map[string]*node{}}
	if spec.TimeoutSeconds != nil {
		g.timeout = time.Duration(*spec.TimeoutSeconds) * time.Second
	}
	for name, r := range spec.Nodes {
		g.nodes[name] = &node{name: name, typ: r.RouterType}
	}
	pool := newUpstreams(o)
	for _, name := range v1alpha1.SortedNodeNames(spec.Nodes) {
		n := g.nodes[name]
		var total int64
		for i, s := range spec.Nodes[name].Steps {
			st := &step{name: StepName(s, i), response: s.Data == v1alpha1.DataResponse,
				condition: s.Condition, hard: s.Dependency == v1alpha1.Hard}
			switch {
			case s.NodeName != "":
				st.node = g.nodes[s.NodeName]
			case s.ServiceName != "":
				// The controller passes the graph with each InferenceService
				// resolved to its URL.
				return nil, fmt.Errorf("node %s step %s: InferenceService %q is not resolved to a URL", name, st.name, s.ServiceName)
			default:
				u, err := pool.get(s.ServiceURL)
				if err != nil {
					return nil, fmt.Errorf("node %s step %s: %w", name, st.name, err)
				}
				st.upstream = u
			}
			st.metrics = m.step(name, st.name)
			if s.Weight != nil {
				total += *s.Weight
			}
			n.cumulative = append(n.cumulative, total)
			n.steps = append(n.steps, st)
		}
	}
	for _, n := range g.nodes {
		markStreams(n, map[*node]bool{})
	}
	g.root = g.nodes[v1alpha1.GraphRootNode]
	return g, nil
}

// markStreams decides whether a node can pass the request body through as
// it arrives: a Sequence of one unconditional step, or a Splitter, whose
// targets are URLs or nodes that stream themselves. Every other node reads
// the body first: a Switch matches conditions on it, an Ensemble sends it
// several times, a longer Sequence may send it again.
func markStreams(n *node, seen map[*node]bool) bool {
	if seen[n] {
		return n.streams
	}
	seen[n] = true
	switch {
	case n.typ == v1alpha1.Sequence && len(n.steps) == 1 && n.steps[0].condition == "":
	case n.typ == v1alpha1.Splitter:
	default:
		return false
	}
	for _, s := range n.steps {
		if s.node != nil && !markStreams(s.node, seen) {
			return false
		}
	}
	n.streams = true
	return true
}

// StepName is a step's name: its own, or its index in the node.
func StepName(s v1alpha1.InferenceStep, i int) string {
	if s.StepName != "" {
		return s.StepName
	}
	return strconv.Itoa(i)
}

// Match reports whether a condition matches a JSON document, as a Switch
// and a Sequence evaluate it.
func Match(doc []byte, cond string) bool {
	return gjson.GetBytes(doc, cond).Exists()
}

// Validate returns every problem of a graph spec as a message; none for a
// graph the router can serve.
func Validate(spec *v1alpha1.InferenceGraphSpec) []string {
	var msgs []string
	for _, p := range v1alpha1.ValidateGraph(spec) {
		msgs = append(msgs, p.String())
	}
	return msgs
}

// CheckCondition reports whether a GJSON condition parses.
func CheckCondition(cond string) error { return v1alpha1.CheckCondition(cond) }
