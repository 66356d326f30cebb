package strtemplate

import (
	"errors"
	"fmt"
	"net/url"
	"text/template/parse"
)

// evalFunction calls a function with the argument nodes args and, when
// hasFinal, the previous command's value last. and and or evaluate their
// arguments only as far as they need, as text/template's do.
func (s *state) evalFunction(dot any, fn *parse.IdentifierNode, args []parse.Node, final any, hasFinal bool) (any, error) {
	n := len(args)
	if hasFinal {
		n++
	}
	arg := func(i int) (any, error) {
		if i == len(args) {
			return final, nil
		}
		return s.evalArg(dot, args[i])
	}
	name := fn.Ident
	if name == "and" || name == "or" {
		if n == 0 {
			return nil, s.errorf(fn, "wrong number of args for %s: want at least 1 got 0", name)
		}
		var v any
		for i := range n {
			var err error
			if v, err = arg(i); err != nil {
				return nil, err
			}
			if t, _ := isTrue(v); t == (name == "or") {
				return v, nil
			}
		}
		return v, nil
	}
	values := make([]any, n)
	for i := range n {
		v, err := arg(i)
		if err != nil {
			return nil, err
		}
		if _, none := v.(noValue); none {
			v = nil
		}
		values[i] = v
	}
	if name == "print" || name == "printf" || name == "println" || name == "urlquery" {
		if name == "printf" && len(values) == 0 {
			return nil, s.errorf(fn, "wrong number of args for printf: want at least 1 got 0")
		}
		if err := s.checkFormatting(fn, name, values); err != nil {
			return nil, s.limitOrCallError(fn, name, err)
		}
	}
	var v any
	var err error
	if f, ok := s.funcs[name]; ok {
		v, err = f(values)
	} else {
		v, err = call(name, values)
	}
	if err == nil {
		err = s.checkResult(fn, name, v)
	}
	if err != nil {
		return nil, s.limitOrCallError(fn, name, err)
	}
	return v, nil
}

// limitOrCallError passes a LimitError on as it is and words any other
// error as text/template words a failed call.
func (s *state) limitOrCallError(fn *parse.IdentifierNode, name string, err error) error {
	var limit *LimitError
	if errors.As(err, &limit) {
		return err
	}
	return s.errorf(fn, "error calling %s: %v", name, err)
}

// arity is the number of arguments of the functions that take a fixed
// number.
var arity = map[string]int{"not": 1, "len": 1, "ne": 2, "lt": 2, "le": 2, "gt": 2, "ge": 2}

func call(name string, args []any) (any, error) {
	if want, fixed := arity[name]; fixed && len(args) != want {
		return nil, fmt.Errorf("wrong number of args for %s: want %d got %d", name, want, len(args))
	}
	switch name {
	case "not":
		t, _ := isTrue(args[0])
		return !t, nil
	case "len":
		return length(args[0])
	case "eq":
		if len(args) == 0 {
			return nil, fmt.Errorf("wrong number of args for eq: want at least 1 got 0")
		}
		return eq(args[0], args[1:]...)
	case "ne":
		equal, err := eq(args[0], args[1])
		return !equal, err
	case "lt":
		return lt(args[0], args[1])
	case "le":
		return le(args[0], args[1])
	case "gt":
		lessOrEqual, err := le(args[0], args[1])
		return !lessOrEqual, err
	case "ge":
		less, err := lt(args[0], args[1])
		return !less, err
	case "index":
		if len(args) == 0 {
			return nil, fmt.Errorf("wrong number of args for index: want at least 1 got 0")
		}
		return index(args[0], args[1:])
	case "slice":
		if len(args) == 0 {
			return nil, fmt.Errorf("wrong number of args for slice: want at least 1 got 0")
		}
		return slice(args[0], args[1:])
	case "print":
		return fmt.Sprint(args...), nil
	case "println":
		return fmt.Sprintln(args...), nil
	case "printf":
		if len(args) == 0 {
			return nil, fmt.Errorf("wrong number of args for printf: want at least 1 got 0")
		}
		format, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("wrong type for value; expected string; got %s", typeName(args[0]))
		}
		return fmt.Sprintf(format, args[1:]...), nil
	case "urlquery":
		if len(args) == 1 {
			if s, ok := args[0].(string); ok {
				return url.QueryEscape(s), nil
			}
		}
		return url.QueryEscape(fmt.Sprint(args...)), nil
	}
	return nil, fmt.Errorf("function %q not defined", name)
}

// typeName names a value's type in an error message.
func typeName(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T", v)
}

func length(v any) (int, error) {
	switch v := v.(type) {
	case string:
		return len(v), nil
	case map[string]string:
		return len(v), nil
	case Data:
		return len(v), nil
	case []any:
		return len(v), nil
	case nil, Null:
		return 0, fmt.Errorf("len of nil pointer")
	}
	return 0, fmt.Errorf("len of type %s", typeName(v))
}

// integer is an index argument: text/template takes any integer.
func integer(v any) (int, error) {
	switch v := v.(type) {
	case int:
		return v, nil
	case uint8:
		return int(v), nil
	case nil:
		return 0, fmt.Errorf("cannot index slice/array with nil")
	}
	return 0, fmt.Errorf("cannot index slice/array with type %s", typeName(v))
}

func index(item any, indexes []any) (any, error) {
	if item == nil {
		return nil, fmt.Errorf("index of untyped nil")
	}
	for _, ix := range indexes {
		switch v := item.(type) {
		case string:
			i, err := integer(ix)
			if err != nil {
				return nil, err
			}
			if i < 0 || i >= len(v) {
				return nil, fmt.Errorf("index out of range: %d", i)
			}
			item = v[i]
		case map[string]string:
			key, ok := ix.(string)
			if !ok {
				return nil, fmt.Errorf("value has type %s; should be string", typeName(ix))
			}
			item = v[key]
		case Data:
			key, ok := ix.(string)
			if !ok {
				return nil, fmt.Errorf("value has type %s; should be string", typeName(ix))
			}
			item = v[key]
		case []any:
			i, err := integer(ix)
			if err != nil {
				return nil, err
			}
			if i < 0 || i >= len(v) {
				return nil, fmt.Errorf("index out of range: %d", i)
			}
			item = v[i]
		case nil, Null:
			return nil, fmt.Errorf("index of nil pointer")
		default:
			return nil, fmt.Errorf("can't index item of type %s", typeName(item))
		}
	}
	return item, nil
}

func slice(item any, indexes []any) (any, error) {
	if item == nil {
		return nil, fmt.Errorf("slice of untyped nil")
	}
	if len(indexes) > 3 {
		return nil, fmt.Errorf("too many slice indexes: %d", len(indexes))
	}
	str, ok := item.(string)
	if !ok {
		return nil, fmt.Errorf("can't slice item of type %s", typeName(item))
	}
	if len(indexes) == 3 {
		return nil, fmt.Errorf("cannot 3-index slice a string")
	}
	bounds := [2]int{0, len(str)}
	for i, ix := range indexes {
		n, err := integer(ix)
		if err != nil {
			return nil, err
		}
		if n < 0 || n > len(str) {
			return nil, fmt.Errorf("index out of range: %d", n)
		}
		bounds[i] = n
	}
	if bounds[0] > bounds[1] {
		return nil, fmt.Errorf("invalid slice index: %d > %d", bounds[0], bounds[1])
	}
	return str[bounds[0]:bounds[1]], nil
}
