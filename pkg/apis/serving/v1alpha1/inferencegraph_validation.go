package v1alpha1

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// GraphProblem is one problem of a graph spec: the field and what is wrong.
type GraphProblem struct {
	Path, Detail string
}

// String is the problem as the webhook reports it: the field path, then the detail.
func (p GraphProblem) String() string { return p.Path + ": " + p.Detail }

// ValidateGraph returns every problem of a graph spec, each naming the node
// and step; none for a graph the router can serve: a root node, node
// references that resolve, no cycles, exactly one target per step, Splitter
// weights summing to 100, conditions that parse.
func ValidateGraph(spec *InferenceGraphSpec) []GraphProblem {
	var problems []GraphProblem
	add := func(path, format string, args ...any) {
		problems = append(problems, GraphProblem{Path: path, Detail: fmt.Sprintf(format, args...)})
	}
	if _, ok := spec.Nodes[GraphRootNode]; !ok {
		add("spec.nodes", "a node named %q is required: every request enters there", GraphRootNode)
	}
	for _, name := range SortedNodeNames(spec.Nodes) {
		r := spec.Nodes[name]
		path := "spec.nodes." + name
		switch r.RouterType {
		case Sequence, Splitter, Ensemble, Switch:
		default:
			add(path+".routerType", "%q is not a router type; use Sequence, Splitter, Ensemble or Switch", r.RouterType)
		}
		if len(r.Steps) == 0 {
			add(path+".steps", "a node needs at least one step")
		}
		var weights int64
		names := map[string]bool{}
		for i, s := range r.Steps {
			sp := fmt.Sprintf("%s.steps[%d]", path, i)
			problems = append(problems, validateStep(spec, r.RouterType, s, i, sp)...)
			if s.StepName != "" {
				if names[s.StepName] {
					add(sp+".name", "%q names another step of the node already", s.StepName)
				}
				names[s.StepName] = true
			}
			if s.Weight != nil {
				weights += *s.Weight
			}
		}
		if r.RouterType == Splitter && len(r.Steps) > 0 && weights != 100 {
			add(path+".steps", "the weights of a Splitter's steps must sum to 100, not %d", weights)
		}
	}
	if cycle := findCycle(spec); cycle != "" {
		add("spec.nodes", "the nodes form a cycle (%s): a request would never end", cycle)
	}
	return problems
}

func validateStep(spec *InferenceGraphSpec, typ InferenceRouterType, s InferenceStep, i int, path string) []GraphProblem {
	var problems []GraphProblem
	add := func(path, format string, args ...any) {
		problems = append(problems, GraphProblem{Path: path, Detail: fmt.Sprintf(format, args...)})
	}
	targets := 0
	for _, t := range []string{s.NodeName, s.ServiceName, s.ServiceURL} {
		if t != "" {
			targets++
		}
	}
	if targets != 1 {
		add(path, "set exactly one of nodeName, serviceName and serviceUrl (%d are set)", targets)
	}
	if s.NodeName != "" {
		if _, ok := spec.Nodes[s.NodeName]; !ok {
			add(path+".nodeName", "no node is named %q", s.NodeName)
		}
	}
	if s.ServiceURL != "" {
		if u, err := url.Parse(s.ServiceURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(path+".serviceUrl", "%q is not an absolute http or https URL", s.ServiceURL)
		}
	}
	switch s.Data {
	case "", DataRequest:
	case DataResponse:
		if typ != Sequence {
			add(path+".data", "$response passes the previous step's response, which only a Sequence has")
		} else if i == 0 {
			add(path+".data", "the first step of a Sequence has no previous response; use $request")
		}
	default:
		add(path+".data", "%q is neither $request nor $response", s.Data)
	}
	if s.Weight != nil && typ != Splitter {
		add(path+".weight", "only a Splitter's steps have weights")
	}
	if typ == Splitter && s.Weight == nil {
		add(path+".weight", "every step of a Splitter needs a weight")
	}
	if s.Condition != "" {
		if typ != Switch && typ != Sequence {
			add(path+".condition", "only the steps of a Switch or a Sequence have conditions")
		}
		if err := CheckCondition(s.Condition); err != nil {
			add(path+".condition", "%v", err)
		}
	}
	switch s.Dependency {
	case "", Soft, Hard:
	default:
		add(path+".dependency", "%q is neither Soft nor Hard", s.Dependency)
	}
	return problems
}

// CheckCondition reports whether a GJSON condition parses: balanced
// brackets and parentheses, closed quotes, and no empty path component.
// GJSON itself never fails on a malformed path (it finds nothing), which
// would make a typo a condition that silently never matches.
func CheckCondition(cond string) error {
	var stack []byte
	inQuote := false
	for i := 0; i < len(cond); i++ {
		c := cond[i]
		switch {
		case c == '\\':
			i++
		case inQuote:
			if c == '"' {
				inQuote = false
			}
		case c == '"':
			inQuote = true
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case c == ')' || c == ']' || c == '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return fmt.Errorf("%q has an unmatched %q at offset %d", cond, c, i)
			}
			stack = stack[:len(stack)-1]
		}
	}
	switch {
	case inQuote:
		return fmt.Errorf("%q has an unclosed quote", cond)
	case len(stack) > 0:
		return fmt.Errorf("%q has an unclosed %q", cond, stack[len(stack)-1])
	case strings.HasPrefix(cond, ".") || strings.HasSuffix(cond, ".") && !strings.HasSuffix(cond, "\\."):
		return fmt.Errorf("%q has an empty path component", cond)
	case strings.Contains(cond, "..") && !strings.Contains(cond, "\\.."):
		return fmt.Errorf("%q has an empty path component", cond)
	}
	// Run it once: GJSON must not panic on it.
	gjson.Get(`{}`, cond)
	return nil
}

// findCycle returns a cycle of node references as "a -> b -> a", or "".
func findCycle(spec *InferenceGraphSpec) string {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) string
	visit = func(name string) string {
		switch state[name] {
		case visiting:
			start := 0
			for i, n := range path {
				if n == name {
					start = i
				}
			}
			return strings.Join(append(append([]string{}, path[start:]...), name), " -> ")
		case done:
			return ""
		}
		state[name] = visiting
		path = append(path, name)
		for _, s := range spec.Nodes[name].Steps {
			if _, ok := spec.Nodes[s.NodeName]; ok && s.NodeName != "" {
				if c := visit(s.NodeName); c != "" {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return ""
	}
	for _, name := range SortedNodeNames(spec.Nodes) {
		if c := visit(name); c != "" {
			return c
		}
	}
	return ""
}

// SortedNodeNames returns the names of a graph's nodes in order.
func SortedNodeNames(nodes map[string]InferenceRouter) []string {
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
