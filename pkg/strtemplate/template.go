// Package strtemplate renders Go template syntax, as text/template parses
// it, over data made of strings and string maps, without reflection.
//
// KServe's configuration and runtimes use Go templates (the ingress domain
// and path templates, placeholders such as {{.Name}} or
// {{.Annotations.key}} in a runtime's container), so Serval reads the same
// syntax. It does not execute them with text/template: that package's
// evaluator looks up methods by name at run time, and a Go binary that can
// do so keeps every exported method of every type it links, because the
// linker can no longer tell which are called. The manager links the types
// of every Kubernetes API group (through client-go's scheme): with
// text/template reachable it kept 10 MB more code and tables, mapped into
// memory by every replica. The parser (text/template/parse) has no such
// cost; this package evaluates its trees.
//
// Supported: text, comments, actions with pipelines and variables, if, with
// and range (over maps, in key order, and integers) with else, break and
// continue, and the functions and, or, not, eq, ne, lt, le, gt, ge, len,
// index, slice, print, printf, println and urlquery, with text/template's
// meaning and, unless ExecuteNoValue is used, the missingkey=error option: a
// field or map key that is not there is an error. A caller may add functions of its own (ParseFuncs), and
// data read from Go structs may hold lists ([]any, for len and index) and
// Null, a nil pointer. Not supported, and refused when parsed: define, block
// and template, and the functions html, js and call.
package strtemplate

import (
	"errors"
	"fmt"
	"text/template/parse"
)

// Data is what a template reads: each field a string, a number, a boolean,
// a string map (such as Labels), a list ([]any), Null, or a nested Data.
type Data map[string]any

// Null is an absent value the data names (a nil pointer, where the data
// comes from a Go struct): false in a condition, printed as <nil>, and an
// error to read a field of, as text/template treats a nil pointer.
type Null struct{}

// String prints Null as text/template prints a nil pointer.
func (Null) String() string { return "<nil>" }

// Funcs are functions a template may call besides the built-in ones, by
// name. Each gets the evaluated arguments.
type Funcs map[string]func(args []any) (any, error)

// Template is a parsed template, safe for concurrent use.
type Template struct {
	tree   *parse.Tree
	funcs  Funcs
	limits Limits
	// text is the template's own size; shared, the budget it renders
	// within (see Within), or nil.
	text   int
	shared *Budget
}

// functions are the names the parser accepts as functions (see funcs.go);
// the values only need to be non-nil.
var functions = map[string]any{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"len": true, "index": true, "slice": true, "print": true, "printf": true, "println": true, "urlquery": true,
}

// ParseError is a template that does not parse, or uses what this package
// does not support: wrong whatever the data, unlike an execution error.
type ParseError struct{ Err error }

// Error is the parser's message.
func (e *ParseError) Error() string { return e.Err.Error() }

// Unwrap is the parser's error.
func (e *ParseError) Unwrap() error { return e.Err }

// Parse parses text, named name in error messages.
func Parse(name, text string) (*Template, error) { return ParseFuncs(name, text, nil) }

// ParseFuncs parses text that may also call funcs.
func ParseFuncs(name, text string, funcs Funcs) (*Template, error) {
	known := functions
	if len(funcs) > 0 {
		known = make(map[string]any, len(functions)+len(funcs))
		for k, v := range functions {
			known[k] = v
		}
		for k := range funcs {
			known[k] = true
		}
	}
	trees, err := parse.Parse(name, text, "", "", known)
	if err != nil {
		return nil, &ParseError{Err: err}
	}
	if len(trees) > 1 {
		return nil, &ParseError{Err: fmt.Errorf("template: %s: define and block are not supported", name)}
	}
	tree := trees[name]
	var unsupported error
	inspect(tree.Root, func(n parse.Node) {
		if _, ok := n.(*parse.TemplateNode); ok && unsupported == nil {
			unsupported = fmt.Errorf("template: %s: {{template}} is not supported", errorContextOf(tree, n))
		}
	})
	if unsupported != nil {
		return nil, &ParseError{Err: unsupported}
	}
	return &Template{tree: tree, funcs: funcs, limits: DefaultLimits, text: len(text)}, nil
}

// Execute renders the template over data; a missing key is an error, and
// so is passing one of the template's Limits (a *LimitError).
func (t *Template) Execute(data Data) (string, error) {
	return t.execute(data, false)
}

// ExecuteNoValue renders the template over data as text/template does by
// default (missingkey=default): a map key that is not there is no value,
// printed as "<no value>" and false in a condition, as there.
func (t *Template) ExecuteNoValue(data Data) (string, error) {
	return t.execute(data, true)
}

func (t *Template) execute(data Data, noValue bool) (string, error) {
	b := budget{limits: t.limits, shared: t.shared}
	if b.shared == nil {
		b.shared = &Budget{limits: t.limits}
	} else {
		b.allowance = t.text
	}
	s := &state{tree: t.tree, funcs: t.funcs, vars: []variable{{"$", data}}, noValue: noValue, budget: b}
	if err := s.walk(data, t.tree.Root); err != nil {
		return "", err
	}
	if t.shared != nil {
		t.shared.added += max(0, s.out.Len()-t.text)
	}
	return s.out.String(), nil
}

// inspect calls f for n and for every node in the lists under it: the
// template's actions and the bodies of if, with and range.
func inspect(n parse.Node, f func(parse.Node)) {
	if n == nil {
		return
	}
	f(n)
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			inspect(c, f)
		}
	case *parse.IfNode:
		inspect(n.List, f)
		inspect(n.ElseList, f)
	case *parse.WithNode:
		inspect(n.List, f)
		inspect(n.ElseList, f)
	case *parse.RangeNode:
		inspect(n.List, f)
		inspect(n.ElseList, f)
	}
}

// errorContextOf is parse.Tree.ErrorContext's location alone: name:line:column.
func errorContextOf(tree *parse.Tree, n parse.Node) string {
	location, _ := tree.ErrorContext(n)
	return location
}

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// Fields lists the field chains the template reads from its data, such as
// ["Labels", "team"] for {{ .Labels.team }} or {{ index .Labels "team" }},
// each once, in the order they appear: a caller can make sample data with
// those keys.
func (t *Template) Fields() [][]string {
	var out [][]string
	seen := map[string]bool{}
	var visit func(parse.Node)
	visit = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.FieldNode:
			if key := fmt.Sprint(n.Ident); !seen[key] {
				seen[key] = true
				out = append(out, n.Ident)
			}
		case *parse.ActionNode:
			visit(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				visit(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				visit(a)
			}
			// index .Labels "key" reads the key as .Labels.key does.
			if len(n.Args) == 3 {
				fn, isIdent := n.Args[0].(*parse.IdentifierNode)
				field, isField := n.Args[1].(*parse.FieldNode)
				key, isString := n.Args[2].(*parse.StringNode)
				if isIdent && fn.Ident == "index" && isField && isString {
					path := append(append([]string{}, field.Ident...), key.Text)
					if k := fmt.Sprint(path); !seen[k] {
						seen[k] = true
						out = append(out, path)
					}
				}
			}
		case *parse.IfNode:
			visit(n.Pipe)
		case *parse.WithNode:
			visit(n.Pipe)
		case *parse.RangeNode:
			visit(n.Pipe)
		}
	}
	inspect(t.tree.Root, visit)
	return out
}
