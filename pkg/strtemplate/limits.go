package strtemplate

import (
	"fmt"
	"strconv"
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
}

// DefaultLimits are the bounds Execute and ExecuteNoValue apply unless
// WithLimits sets others: far above what KServe's templates need (a
// domain, a path, a preset's arguments render in under 100 steps and 1
// KiB), far below what hurts a manager with a 512 MiB limit.
var DefaultLimits = Limits{MaxOutputBytes: 64 << 10, MaxSteps: 100_000, MaxRangeIterations: 10_000}

// Bound names one of Limits' bounds, as serval-config spells its key.
type Bound string

// The bounds, as the serval-config keys templates.<bound> name them.
const (
	BoundOutputBytes     Bound = "maxOutputBytes"
	BoundSteps           Bound = "maxSteps"
	BoundRangeIterations Bound = "maxRangeIterations"
)

// LimitError is a render stopped at one of its bounds. The render's
// partial output is dropped.
type LimitError struct {
	// Bound is the bound passed and Limit its value.
	Bound Bound
	Limit int
	// Where locates the action (name:line:column) and What says what
	// passed the bound.
	Where, What string
}

// Error names the template's place, what passed the bound, the bound and
// the setting that raises it.
func (e *LimitError) Error() string {
	return fmt.Sprintf("template: %s: %s passes the bound of %d (serval-config templates.%s)", e.Where, e.What, e.Limit, e.Bound)
}

// WithLimits returns the template with other bounds; a zero field keeps
// the default.
func (t *Template) WithLimits(l Limits) *Template {
	c := *t
	c.limits = l.OrDefaults()
	return &c
}

// AllowingOwnText returns the template with an output bound of its own
// text's size plus MaxOutputBytes: for a template that is a whole document
// (an LLMInferenceService's spec), whose output is mostly its own text and
// whose actions together may add MaxOutputBytes.
func (t *Template) AllowingOwnText(text string) *Template {
	c := *t
	c.allowance = len(text)
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
	return l
}

// budget counts one execution's spending against its limits.
type budget struct {
	limits            Limits
	steps, iterations int
	// allowance is output the template may write beyond
	// limits.MaxOutputBytes (see AllowingOwnText).
	allowance int
}

func (s *state) overLimit(node parse.Node, b Bound, limit int, what string) error {
	location, _ := s.tree.ErrorContext(node)
	return &LimitError{Bound: b, Limit: limit, Where: location, What: what}
}

// step spends cost evaluation steps at node.
func (s *state) step(node parse.Node, cost int) error {
	s.budget.steps += cost
	if s.budget.steps > s.budget.limits.MaxSteps {
		return s.overLimit(node, BoundSteps, s.budget.limits.MaxSteps, "the evaluation")
	}
	return nil
}

// iterate spends one range iteration at node.
func (s *state) iterate(node parse.Node) error {
	s.budget.iterations++
	if s.budget.iterations > s.budget.limits.MaxRangeIterations {
		return s.overLimit(node, BoundRangeIterations, s.budget.limits.MaxRangeIterations, "the range iterations")
	}
	return s.step(node, 1)
}

// grow checks that n more output bytes stay within the bound.
func (s *state) grow(node parse.Node, n int) error {
	if s.out.Len()+n-s.budget.allowance > s.budget.limits.MaxOutputBytes {
		return s.overLimit(node, BoundOutputBytes, s.budget.limits.MaxOutputBytes, "the output")
	}
	return nil
}

// checkFormatting refuses, before any allocation, a call of print, printf
// or println whose string arguments or printf widths alone pass the output
// bound: fmt allocates the whole result, so the bound must hold before it
// runs, not after.
func (s *state) checkFormatting(node parse.Node, name string, args []any) error {
	max := s.budget.limits.MaxOutputBytes
	total := 0
	for _, a := range args {
		if str, ok := a.(string); ok {
			total += len(str)
		}
	}
	if total > max {
		return s.overLimit(node, BoundOutputBytes, max, "the arguments of "+name)
	}
	if name != "printf" || len(args) == 0 {
		return nil
	}
	format, _ := args[0].(string)
	if w, star := largestWidth(format); star {
		return fmt.Errorf("a width or precision from an argument (%%*) is not supported")
	} else if w > max {
		return s.overLimit(node, BoundOutputBytes, max, "a printf width of "+strconv.Itoa(w))
	}
	return nil
}

// largestWidth is the largest width or precision in a fmt format, and
// whether any is taken from an argument ('*').
func largestWidth(format string) (largest int, star bool) {
directives:
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c == '*':
				star = true
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				n, err := strconv.Atoi(format[i:j])
				if err != nil { // more digits than an int holds
					n = int(^uint(0) >> 1)
				}
				largest = max(largest, n)
				i = j - 1
			case c == '+' || c == '-' || c == '#' || c == ' ' || c == '.' || c == '[' || c == ']':
			default:
				// The verb ends the directive ('%' for "%%").
				continue directives
			}
		}
	}
	return largest, star
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
