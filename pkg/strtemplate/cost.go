package strtemplate

import (
	"fmt"
	"strconv"
	"text/template/parse"
	"unicode/utf8"
)

// What fmt may write for one value, at most, before it runs: the cost of
// print, printf, println, urlquery and of an action that prints a value is
// the sum of these over what it formats, checked against the output bound
// before fmt allocates anything. fmt formats a map, a list or a struct
// element by element (a width pads every one) and a format may name one
// operand again and again (%[1]v%[1]v...), so the estimate walks the
// operands and counts every directive: bounding the widths alone does not
// bound the allocation.
const (
	// leafOverhead covers what fmt adds around one element: separators,
	// brackets, a key's colon, and the %!verb(type=...) wrapper of a verb
	// that does not fit the value.
	leafOverhead = 32
	// intCost is the longest integer fmt writes: %#b of a negative int64.
	intCost = 70
	// floatCost is the longest float64 fmt writes without a precision:
	// %f of 1e308.
	floatCost = 330
	// verbExpansion is how many bytes a verb may write per byte of a
	// string: %q escapes a byte as \x00, %x writes two and "% x" three.
	verbExpansion = 4
	// missingCost is %!v(MISSING), %!v(BADINDEX) and the like.
	missingCost = 16
)

// formatCost is what formatting args with verb may write at most, or more
// than limit once it is known to pass it (the walk stops there, so the
// estimate costs no more than the bound it checks).
func formatCost(args []any, verb rune, limit int) int {
	total := 0
	for _, a := range args {
		total += valueCost(a, verb, limit-total)
		if total > limit {
			break
		}
	}
	return total
}

// valueCost is what fmt may write for v with verb, or more than limit.
func valueCost(v any, verb rune, limit int) int {
	expand := 1
	if verb != 'v' && verb != 's' && verb != 'd' {
		expand = verbExpansion
	}
	switch v := v.(type) {
	case string:
		return len(v)*expand + leafOverhead
	case int, uint8, bool, nil, Null, noValue:
		return intCost + leafOverhead
	case float64:
		return floatCost + leafOverhead
	case map[string]string:
		total := leafOverhead
		for k, val := range v {
			if total += (len(k)+len(val))*expand + leafOverhead; total > limit {
				return total
			}
		}
		return total
	case Data:
		total := leafOverhead
		for k, val := range v {
			if total += len(k)*expand + valueCost(val, verb, limit-total); total > limit {
				return total
			}
		}
		return total
	case []any:
		total := leafOverhead
		for _, val := range v {
			if total += valueCost(val, verb, limit-total); total > limit {
				return total
			}
		}
		return total
	}
	// A value of a caller's function: its text is what fmt writes.
	return len(fmt.Sprint(v))*expand + leafOverhead
}

// isCompound reports whether fmt formats v element by element.
func isCompound(v any) bool {
	switch v.(type) {
	case map[string]string, Data, []any:
		return true
	}
	return false
}

// directive is one %-directive of a printf format.
type directive struct {
	verb rune
	// arg is the operand's index in the arguments after the format; -1
	// when the directive takes none (%%).
	arg int
	// width and precision, 0 when not given; star when either comes
	// from an argument.
	width, precision int
	star             bool
}

// directives parses a printf format as fmt does (flags, an explicit
// argument index, width, precision, verb) and returns its directives with
// the operand each formats.
func directives(format string) []directive {
	var out []directive
	next := 0
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			continue
		}
		i++
		d := directive{arg: -1}
		for i < len(format) && (format[i] == '+' || format[i] == '-' || format[i] == '#' || format[i] == ' ' || format[i] == '0') {
			i++
		}
		i, next = argIndex(format, i, next)
		i, d.width, d.star = number(format, i, d.star)
		if i < len(format) && format[i] == '.' {
			i++
			i, next = argIndex(format, i, next)
			i, d.precision, d.star = number(format, i, d.star)
		}
		i, next = argIndex(format, i, next)
		if i >= len(format) {
			out = append(out, directive{verb: 'v', arg: next})
			break
		}
		r, size := utf8.DecodeRuneInString(format[i:])
		i += size
		d.verb = r
		if r != '%' {
			d.arg = next
			next++
		}
		out = append(out, d)
	}
	return out
}

// argIndex reads an explicit argument index "[n]" at i, if there is one,
// and returns the position after it and the operand the next verb takes.
func argIndex(format string, i, next int) (int, int) {
	if i >= len(format) || format[i] != '[' {
		return i, next
	}
	for j := i + 1; j < len(format); j++ {
		if format[j] == ']' {
			n, err := strconv.Atoi(format[i+1 : j])
			if err != nil || n < 1 {
				return j + 1, next // fmt writes %!v(BADINDEX)
			}
			return j + 1, n - 1
		}
	}
	return len(format), next
}

// number reads a width or precision at i: digits, or '*' (from an
// argument). Digits beyond an int's range read as the largest int.
func number(format string, i int, star bool) (int, int, bool) {
	if i < len(format) && format[i] == '*' {
		return i + 1, 0, true
	}
	j := i
	for j < len(format) && format[j] >= '0' && format[j] <= '9' {
		j++
	}
	if j == i {
		return i, 0, star
	}
	n, err := strconv.Atoi(format[i:j])
	if err != nil {
		n = int(^uint(0) >> 1)
	}
	return j, n, star
}

// checkFormatting refuses, before fmt runs, a call of print, printf,
// println or urlquery whose result may pass the output bound, and a printf
// width or precision past the width bound, from an argument (%*d), or on a
// map, list or struct (where it pads every element).
func (s *state) checkFormatting(node parse.Node, name string, args []any) error {
	limit := s.budget.limits.MaxOutputBytes
	var cost int
	switch name {
	case "printf":
		format, _ := args[0].(string)
		var err error
		if cost, err = s.printfCost(node, format, args[1:]); err != nil {
			return err
		}
	case "urlquery":
		cost = formatCost(args, 'v', limit) * 3 // each byte may become %XX
	default:
		cost = formatCost(args, 'v', limit) + len(args)
	}
	if cost > limit {
		return s.overLimit(node, BoundOutputBytes, limit, "what "+name+" may write (by the size of its arguments)")
	}
	return nil
}

// printfCost is what printf may write with format and operands: the
// format's own bytes, each directive's operand (as often as directives
// name it) padded to its width, and every operand once more for fmt's
// %!(EXTRA ...) of those no directive took.
func (s *state) printfCost(node parse.Node, format string, operands []any) (int, error) {
	limit := s.budget.limits.MaxOutputBytes
	maxWidth := s.budget.limits.MaxFormatWidth
	cost := len(format) + formatCost(operands, 'v', limit)
	for _, d := range directives(format) {
		if d.star {
			return 0, s.overLimit(node, BoundFormatWidth, 0, "a printf width or precision from an argument (%*) is not supported")
		}
		if w := max(d.width, d.precision); w > maxWidth {
			return 0, s.overLimit(node, BoundFormatWidth, maxWidth, "a printf width or precision of "+strconv.Itoa(w))
		}
		if d.arg < 0 {
			cost++
			continue
		}
		if d.arg >= len(operands) {
			cost += missingCost
			continue
		}
		op := operands[d.arg]
		if (d.width > 0 || d.precision > 0) && isCompound(op) {
			return 0, s.overLimit(node, BoundFormatWidth, 0, "a printf width or precision on a map, list or object pads each of its elements and is not supported")
		}
		cost += max(d.width, d.precision) + valueCost(op, d.verb, limit-cost)
		if cost > limit {
			return cost, nil
		}
	}
	return cost, nil
}
