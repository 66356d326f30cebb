package strtemplate

import (
	"fmt"
	"text/template/parse"
)

// Limits bound what rendering one template may cost, so that a string a
// namespace user writes (a runtime's argument, a preset's field) cannot
// take the process's memory or CPU: a template is a program, and
// {{ range 20000000 }} is a short one.
type Limits struct {
	// MaxOutputBytes bounds the rendered text and every value made while
	// rendering it (what print, printf, println and urlquery return, and
	// a printf width or precision).
	MaxOutputBytes int
	// MaxSteps bounds the evaluation steps: each node walked and each
	// command evaluated is one, and a function's result costs one more
	// per KiB it holds.
	MaxSteps int
	// MaxRangeIterations bounds the iterations of all range actions
	// together.
	MaxRangeIterations int
	// MaxFormatWidth bounds each printf width and precision. It is kept
	// small: a width costs its size for every directive that has it.
	MaxFormatWidth int
}

// DefaultLimits are the bounds Execute and ExecuteNoValue apply unless
// WithLimits sets others: far above what KServe's templates need (a
// domain, a path, a preset's arguments render in under 100 steps and 1
// KiB), far below what hurts a manager with a 512 MiB limit.
var DefaultLimits = Limits{MaxOutputBytes: 64 << 10, MaxSteps: 100_000, MaxRangeIterations: 10_000, MaxFormatWidth: 1024}

// Bound names one of Limits' bounds, as serval-config spells its key.
type Bound string

// The bounds, as the serval-config keys templates.<bound> name them.
const (
	BoundOutputBytes     Bound = "maxOutputBytes"
	BoundSteps           Bound = "maxSteps"
	BoundRangeIterations Bound = "maxRangeIterations"
	BoundFormatWidth     Bound = "maxFormatWidth"
)

// LimitError is a render stopped at one of its bounds. The render's
// partial output is dropped.
type LimitError struct {
	// Bound is the bound passed and Limit its value; a Limit of 0 is a
	// construct that no value of the bound admits (What says which).
	Bound Bound
	Limit int
	// Where locates the action (name:line:column) and What says what
	// passed the bound.
	Where, What string
}

// Error names the template's place, what passed the bound, the bound and
// the setting that raises it.
func (e *LimitError) Error() string {
	if e.Limit == 0 {
		return fmt.Sprintf("template: %s: %s (serval-config templates.%s)", e.Where, e.What, e.Bound)
	}
	return fmt.Sprintf("template: %s: %s passes the bound of %d (serval-config templates.%s)", e.Where, e.What, e.Limit, e.Bound)
}

// WithLimits returns the template with other bounds; a zero field keeps
// the default.
func (t *Template) WithLimits(l Limits) *Template {
	c := *t
	c.limits = l.OrDefaults()
	return &c
}

// Budget is what several renders spend together: a document whose
// strings are each a template (an LLMInferenceService's spec) is bounded
// as a whole, each string's output may be its own size plus what the
// others have not yet added, and the steps and range iterations of all of
// them count against one bound each.
type Budget struct {
	limits            Limits
	steps, iterations int
	// added is the output the renders so far wrote beyond their own
	// text.
	added int
}

// NewBudget is a budget of l (a zero field keeps the default).
func NewBudget(l Limits) *Budget { return &Budget{limits: l.OrDefaults()} }

// Within returns the template rendering within b: its output may be its
// own text's size plus what b has left, and its steps and iterations are
// b's. The template's own limits are replaced by b's.
func (t *Template) Within(b *Budget) *Template {
	c := *t
	c.shared = b
	c.limits = b.limits
	return &c
}

// OrDefaults is l with each zero field set to DefaultLimits'.
func (l Limits) OrDefaults() Limits {
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultLimits.MaxOutputBytes
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultLimits.MaxSteps
	}
	if l.MaxRangeIterations <= 0 {
		l.MaxRangeIterations = DefaultLimits.MaxRangeIterations
	}
	if l.MaxFormatWidth <= 0 {
		l.MaxFormatWidth = DefaultLimits.MaxFormatWidth
	}
	return l
}

// budget counts one execution's spending against its limits.
type budget struct {
	limits Limits
	// shared, when the render is one of several, holds the steps and
	// iterations spent and the output added by all of them.
	shared *Budget
	// allowance is output the template may write beyond what the
	// budget has left: its own text's size, for one of several.
	allowance int
}

// spent is where steps, iterations and added output are counted: the
// shared budget, or the execution's own.
func (b *budget) spent() *Budget { return b.shared }

func (s *state) overLimit(node parse.Node, b Bound, limit int, what string) error {
	location, _ := s.tree.ErrorContext(node)
	return &LimitError{Bound: b, Limit: limit, Where: location, What: what}
}

// step spends cost evaluation steps at node.
func (s *state) step(node parse.Node, cost int) error {
	spent := s.budget.spent()
	spent.steps += cost
	if spent.steps > s.budget.limits.MaxSteps {
		return s.overLimit(node, BoundSteps, s.budget.limits.MaxSteps, "the evaluation")
	}
	return nil
}

// iterate spends one range iteration at node.
func (s *state) iterate(node parse.Node) error {
	spent := s.budget.spent()
	spent.iterations++
	if spent.iterations > s.budget.limits.MaxRangeIterations {
		return s.overLimit(node, BoundRangeIterations, s.budget.limits.MaxRangeIterations, "the range iterations")
	}
	return s.step(node, 1)
}

// grow checks that n more output bytes stay within the bound.
func (s *state) grow(node parse.Node, n int) error {
	if s.out.Len()+n-s.budget.allowance > s.budget.limits.MaxOutputBytes-s.budget.spent().added {
		return s.overLimit(node, BoundOutputBytes, s.budget.limits.MaxOutputBytes, "the output")
	}
	return nil
}

// checkResult bounds a function's result and spends a step per KiB of it.
func (s *state) checkResult(node parse.Node, name string, v any) error {
	str, ok := v.(string)
	if !ok {
		return nil
	}
	if len(str) > s.budget.limits.MaxOutputBytes {
		return s.overLimit(node, BoundOutputBytes, s.budget.limits.MaxOutputBytes, "the result of "+name)
	}
	return s.step(node, len(str)>>10)
}
