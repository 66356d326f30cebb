package strtemplate

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"text/template/parse"
)

// state is one execution: the output so far and the variables in scope.
// It follows text/template's exec.go, node by node, on this package's
// values: string, int, float64, bool, uint8 (a byte of a string), nil,
// map[string]string and Data.
type state struct {
	tree  *parse.Tree
	funcs Funcs
	out   strings.Builder
	vars  []variable
	// noValue reads a missing map key as no value (text/template's
	// default) rather than as an error (missingkey=error).
	noValue bool
	budget  budget
}

type variable struct {
	name  string
	value any
}

// errorf is an error at a node, located and worded the way text/template's
// execution errors are.
func (s *state) errorf(node parse.Node, format string, args ...any) error {
	location, context := s.tree.ErrorContext(node)
	return fmt.Errorf("template: %s: executing %q at <%s>: %s", location, s.tree.Name, context, fmt.Sprintf(format, args...))
}

func (s *state) mark() int { return len(s.vars) }

func (s *state) pop(mark int) { s.vars = s.vars[:mark] }

func (s *state) push(name string, value any) { s.vars = append(s.vars, variable{name, value}) }

// setVar assigns the innermost variable of that name.
func (s *state) setVar(node *parse.VariableNode, value any) error {
	name := node.Ident[0]
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = value
			return nil
		}
	}
	return s.errorf(node, "undefined variable: %s", name)
}

// setTopVar assigns the n-th variable from the top of the stack.
func (s *state) setTopVar(n int, value any) { s.vars[len(s.vars)-n].value = value }

func (s *state) varValue(node parse.Node, name string) (any, error) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value, nil
		}
	}
	return nil, s.errorf(node, "undefined variable: %s", name)
}

func (s *state) walk(dot any, node parse.Node) error {
	if err := s.step(node, 1); err != nil {
		return err
	}
	switch node := node.(type) {
	case *parse.ActionNode:
		val, err := s.evalPipeline(dot, node.Pipe)
		if err != nil || len(node.Pipe.Decl) > 0 {
			return err
		}
		return s.print(node, val)
	case *parse.BreakNode:
		return errBreak
	case *parse.ContinueNode:
		return errContinue
	case *parse.CommentNode:
	case *parse.IfNode:
		return s.walkIfOrWith(dot, &node.BranchNode, false)
	case *parse.WithNode:
		return s.walkIfOrWith(dot, &node.BranchNode, true)
	case *parse.ListNode:
		for _, n := range node.Nodes {
			if err := s.walk(dot, n); err != nil {
				return err
			}
		}
	case *parse.RangeNode:
		return s.walkRange(dot, node)
	case *parse.TextNode:
		if err := s.grow(node, len(node.Text)); err != nil {
			return err
		}
		s.out.Write(node.Text)
	default:
		return s.errorf(node, "unsupported node %s", node)
	}
	return nil
}

// inKeyOrder yields a map's keys and values in key order, as range does.
func inKeyOrder[V any](m map[string]V) iter.Seq2[any, any] {
	return func(yield func(any, any) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

// upTo yields 0 to n-1, each as index and element, as range over an
// integer does.
func upTo[N int | uint8](n N) iter.Seq2[any, any] {
	return func(yield func(any, any) bool) {
		for i := N(0); i < n; i++ {
			if !yield(i, i) {
				return
			}
		}
	}
}

// print writes a value as text/template does: with fmt, and "<no value>"
// for nil.
// noValue is what ExecuteNoValue reads for a map key that is not there:
// text/template's invalid value. It prints as "<no value>", is false in a
// condition, and reaches a function as nil.
type noValue struct{}

func (s *state) print(node parse.Node, v any) error {
	text := "<no value>"
	if _, none := v.(noValue); v != nil && !none {
		// The whole object may be the value ({{ . }}): its size is
		// checked before fmt makes its text.
		if _, isString := v.(string); !isString {
			if err := s.grow(node, formatCost([]any{v}, 'v', s.budget.limits.MaxOutputBytes+1)); err != nil {
				return err
			}
		}
		text = fmt.Sprint(v)
	}
	if err := s.grow(node, len(text)); err != nil {
		return err
	}
	s.out.WriteString(text)
	return nil
}

func (s *state) walkIfOrWith(dot any, node *parse.BranchNode, with bool) error {
	defer s.pop(s.mark())
	val, err := s.evalPipeline(dot, node.Pipe)
	if err != nil {
		return err
	}
	t, ok := isTrue(val)
	if !ok {
		return s.errorf(node, "if/with can't use %v", val)
	}
	switch {
	case t && with:
		return s.walk(val, node.List)
	case t:
		return s.walk(dot, node.List)
	case node.ElseList != nil:
		return s.walk(dot, node.ElseList)
	}
	return nil
}

func (s *state) walkRange(dot any, r *parse.RangeNode) error {
	defer s.pop(s.mark())
	val, err := s.evalPipeline(dot, r.Pipe)
	if err != nil {
		return err
	}
	mark := s.mark()
	decl := r.Pipe.Decl
	iteration := func(index, elem any) error {
		defer s.pop(mark)
		var err error
		if len(decl) > 0 {
			switch {
			case r.Pipe.IsAssign && len(decl) > 1:
				err = s.setVar(decl[0], index)
			case r.Pipe.IsAssign:
				err = s.setVar(decl[0], elem)
			default:
				s.setTopVar(1, elem)
			}
		}
		if len(decl) > 1 && err == nil {
			if r.Pipe.IsAssign {
				err = s.setVar(decl[1], elem)
			} else {
				s.setTopVar(2, index)
			}
		}
		if err != nil {
			return err
		}
		return s.walk(elem, r.List)
	}
	if k := kindOf(val); (k == intKind || k == uintKind) && len(decl) > 1 {
		return s.errorf(r, "can't use %v to iterate over more than one variable", val)
	}
	var elems iter.Seq2[any, any]
	switch v := val.(type) {
	case map[string]string:
		elems = inKeyOrder(v)
	case Data:
		elems = inKeyOrder(v)
	case int:
		elems = upTo(v)
	case uint8:
		elems = upTo(v)
	case nil:
	default:
		return s.errorf(r, "range can't iterate over %v", v)
	}
	if elems == nil { // nil ranges over nothing, as in text/template
		elems = func(func(any, any) bool) {}
	}
	ran := false
	for index, elem := range elems {
		ran = true
		if err := s.iterate(r); err != nil {
			return err
		}
		err := iteration(index, elem)
		if errors.Is(err, errBreak) {
			break
		}
		if err != nil && !errors.Is(err, errContinue) {
			return err
		}
	}
	if !ran && r.ElseList != nil {
		return s.walk(dot, r.ElseList)
	}
	return nil
}

func (s *state) evalPipeline(dot any, pipe *parse.PipeNode) (any, error) {
	var value any
	final := false
	for _, cmd := range pipe.Cmds {
		v, err := s.evalCommand(dot, cmd, value, final)
		if err != nil {
			return nil, err
		}
		value, final = v, true
	}
	for _, v := range pipe.Decl {
		if pipe.IsAssign {
			if err := s.setVar(v, value); err != nil {
				return nil, err
			}
		} else {
			s.push(v.Ident[0], value)
		}
	}
	return value, nil
}

// evalCommand evaluates one command of a pipeline; final is the previous
// command's value, passed as the last argument when hasFinal.
func (s *state) evalCommand(dot any, cmd *parse.CommandNode, final any, hasFinal bool) (any, error) {
	if err := s.step(cmd, 1); err != nil {
		return nil, err
	}
	first := cmd.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		if err := s.noArgs(cmd, hasFinal); err != nil {
			return nil, err
		}
		return s.evalFields(n, dot, n.Ident)
	case *parse.ChainNode:
		if err := s.noArgs(cmd, hasFinal); err != nil {
			return nil, err
		}
		return s.evalChain(dot, n)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, n, cmd.Args[1:], final, hasFinal)
	case *parse.PipeNode:
		if err := s.noArgs(cmd, hasFinal); err != nil {
			return nil, err
		}
		return s.evalPipeline(dot, n)
	case *parse.VariableNode:
		if err := s.noArgs(cmd, hasFinal); err != nil {
			return nil, err
		}
		return s.evalVariable(n)
	case *parse.NilNode:
		return nil, s.errorf(n, "nil is not a command")
	}
	if err := s.noArgs(cmd, hasFinal); err != nil {
		return nil, err
	}
	return s.evalArg(dot, first)
}

// noArgs refuses arguments to what is not a function.
func (s *state) noArgs(cmd *parse.CommandNode, hasFinal bool) error {
	if len(cmd.Args) > 1 || hasFinal {
		return s.errorf(cmd, "can't give argument to non-function %s", cmd.Args[0])
	}
	return nil
}

func (s *state) evalArg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.NilNode:
		return nil, nil
	case *parse.FieldNode:
		return s.evalFields(n, dot, n.Ident)
	case *parse.VariableNode:
		return s.evalVariable(n)
	case *parse.PipeNode:
		return s.evalPipeline(dot, n)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, n, nil, nil, false)
	case *parse.ChainNode:
		return s.evalChain(dot, n)
	case *parse.BoolNode:
		return n.True, nil
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		return s.number(n)
	}
	return nil, s.errorf(n, "can't handle %s", n)
}

// number is a constant as text/template types it for an argument of any
// type: float64 when written as a float, else int.
func (s *state) number(n *parse.NumberNode) (any, error) {
	switch {
	case n.IsComplex:
		return nil, s.errorf(n, "complex constants are not supported")
	case n.IsFloat && !isHexInt(n.Text) && !isRuneInt(n.Text) && strings.ContainsAny(n.Text, ".eEpP"):
		return n.Float64, nil
	case n.IsInt:
		return int(n.Int64), nil
	case n.IsUint:
		return nil, s.errorf(n, "%s overflows int", n.Text)
	}
	return n.Float64, nil
}

func isRuneInt(s string) bool { return len(s) > 0 && s[0] == '\'' }

func isHexInt(s string) bool {
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !strings.ContainsAny(s, "pP")
}

func (s *state) evalVariable(n *parse.VariableNode) (any, error) {
	v, err := s.varValue(n, n.Ident[0])
	if err != nil || len(n.Ident) == 1 {
		return v, err
	}
	return s.evalFields(n, v, n.Ident[1:])
}

func (s *state) evalChain(dot any, n *parse.ChainNode) (any, error) {
	if len(n.Field) == 0 {
		return nil, s.errorf(n, "internal error: no fields in evalChain")
	}
	if _, ok := n.Node.(*parse.NilNode); ok {
		return nil, s.errorf(n, "indirection through explicit nil in %s", n)
	}
	v, err := s.evalArg(dot, n.Node)
	if err != nil {
		return nil, err
	}
	return s.evalFields(n, v, n.Field)
}

// evalFields follows a chain of field names from v: keys of Data and of
// string maps, each of which must be there.
func (s *state) evalFields(node parse.Node, v any, names []string) (any, error) {
	for _, name := range names {
		switch r := v.(type) {
		case Data:
			f, ok := r[name]
			if !ok {
				if s.noValue {
					return noValue{}, nil
				}
				return nil, s.errorf(node, "map has no entry for key %q", name)
			}
			v = f
		case map[string]string:
			f, ok := r[name]
			if !ok {
				if s.noValue {
					return noValue{}, nil
				}
				return nil, s.errorf(node, "map has no entry for key %q", name)
			}
			v = f
		case noValue:
			return r, nil // a field of no value is no value, as in text/template
		case nil:
			return nil, s.errorf(node, "nil data; no entry for key %q", name)
		case Null:
			return nil, s.errorf(node, "nil pointer evaluating field %s", name)
		default:
			return nil, s.errorf(node, "can't evaluate field %s in type %T", name, v)
		}
	}
	return v, nil
}

// isTrue is text/template's truth: false, 0, "" and empty maps are false;
// ok is false for nil.
func isTrue(v any) (truth, ok bool) {
	switch v := v.(type) {
	case nil:
		return false, false
	case noValue:
		return false, true
	case bool:
		return v, true
	case string:
		return v != "", true
	case int:
		return v != 0, true
	case uint8:
		return v != 0, true
	case float64:
		return v != 0, true
	case map[string]string:
		return len(v) > 0, true
	case Data:
		return len(v) > 0, true
	case []any:
		return len(v) > 0, true
	case Null:
		return false, true
	}
	return true, true
}
