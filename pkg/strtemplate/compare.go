package strtemplate

import (
	"errors"
	"fmt"
)

// kind groups values as text/template's comparisons do.
type kind int

const (
	invalidKind kind = iota
	boolKind
	intKind
	uintKind
	floatKind
	stringKind
)

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errBadComparison     = errors.New("incompatible types for comparison")
)

func kindOf(v any) kind {
	switch v.(type) {
	case bool:
		return boolKind
	case int:
		return intKind
	case uint8:
		return uintKind
	case float64:
		return floatKind
	case string:
		return stringKind
	}
	return invalidKind
}

// isNil is true for nil and for a nil map.
func isNil(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]string:
		return v == nil
	case Data:
		return v == nil
	}
	return false
}

// eq is true when a equals any of bs. Integers compare across signedness;
// other kinds must match, and maps compare only with nil.
func eq(a any, bs ...any) (bool, error) {
	if len(bs) == 0 {
		return false, errors.New("missing argument for comparison")
	}
	ka := kindOf(a)
	for _, b := range bs {
		kb := kindOf(b)
		var truth bool
		switch {
		case ka != kb && isIntegers(ka, kb):
			truth = asInt(a) == asInt(b)
		case ka != kb:
			if a != nil && b != nil {
				return false, errBadComparison
			}
		case ka == invalidKind:
			if !isNil(a) && !isNil(b) {
				return false, fmt.Errorf("non-comparable type %v: %s", b, typeName(b))
			}
			truth = isNil(a) == isNil(b)
		case ka == uintKind:
			truth = a.(uint8) == b.(uint8)
		default:
			truth = a == b
		}
		if truth {
			return true, nil
		}
	}
	return false, nil
}

func isIntegers(a, b kind) bool {
	return (a == intKind && b == uintKind) || (a == uintKind && b == intKind)
}

func asInt(v any) int {
	if u, ok := v.(uint8); ok {
		return int(u)
	}
	return v.(int)
}

// lt orders two integers, floats or strings.
func lt(a, b any) (bool, error) {
	ka, kb := kindOf(a), kindOf(b)
	if ka == invalidKind || ka == boolKind || kb == invalidKind || kb == boolKind {
		return false, errBadComparisonType
	}
	if ka != kb {
		if isIntegers(ka, kb) {
			return asInt(a) < asInt(b), nil
		}
		return false, errBadComparison
	}
	switch ka {
	case intKind, uintKind:
		return asInt(a) < asInt(b), nil
	case floatKind:
		return a.(float64) < b.(float64), nil
	}
	return a.(string) < b.(string), nil
}

func le(a, b any) (bool, error) {
	less, err := lt(a, b)
	if less || err != nil {
		return less, err
	}
	return eq(a, b)
}
