package migrate

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Migrate edits a document in place: it parses the input once for the
// positions (orig) and migrates a copy (work); rewriteInPlace then turns
// what changed between the two trees into edits of the input's text, so
// that every byte outside the changed lines (comments, their alignment,
// indentation, quoting, blank lines) stays as the user wrote it. A change
// it cannot place (a flow-style mapping that gains a key, a value whose
// kind changed) makes it give up, and the document is encoded whole
// instead, indented as the input was (encodeDocument).

// copyTree deep-copies a node tree, recording for each copy the node it
// was copied from.
func copyTree(n *yaml.Node, from map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = copyTree(child, from)
	}
	from[&c] = n
	return &c
}

// scalarEdit replaces the bytes [start, end) of a line.
type scalarEdit struct {
	line, start, end int
	text             string
}

// inPlace collects the edits of one document's text.
type inPlace struct {
	lines   []string
	from    map[*yaml.Node]*yaml.Node
	layout  layout
	scalars []scalarEdit
	// inserts are new lines after a line (0-based), in order.
	inserts map[int][]string
	deletes map[int]bool
}

// rewriteInPlace returns raw with the changes from orig to work made in
// its text, or false when a change cannot be placed there.
func rewriteInPlace(raw []byte, orig, work *yaml.Node, from map[*yaml.Node]*yaml.Node, l layout) ([]byte, bool) {
	e := &inPlace{lines: strings.Split(string(raw), "\n"), from: from, layout: l,
		inserts: map[int][]string{}, deletes: map[int]bool{}}
	if !e.diff(orig, work) {
		return nil, false
	}
	return e.apply(), true
}

// diff records the edits that turn orig into work.
func (e *inPlace) diff(orig, work *yaml.Node) bool {
	if orig.Kind != work.Kind {
		return false
	}
	switch orig.Kind {
	case yaml.ScalarNode:
		if orig.Value == work.Value {
			return true
		}
		return e.replaceScalar(orig, work.Value)
	case yaml.MappingNode:
		return e.diffMapping(orig, work)
	case yaml.AliasNode:
		return true
	default: // documents and sequences: the same items, each diffed
		if len(orig.Content) != len(work.Content) {
			return false
		}
		for i := range work.Content {
			if e.from[work.Content[i]] != orig.Content[i] || !e.diff(orig.Content[i], work.Content[i]) {
				return false
			}
		}
		return true
	}
}

// diffMapping matches work's pairs with orig's by the node each was copied
// from: a renamed key is a scalar edit, a new pair an insertion after the
// pair before it, a pair gone a deletion of its lines.
func (e *inPlace) diffMapping(orig, work *yaml.Node) bool {
	index := map[*yaml.Node]int{}
	for i := 0; i+1 < len(orig.Content); i += 2 {
		index[orig.Content[i]] = i
	}
	seen := map[int]bool{}
	prev := -1
	for i := 0; i+1 < len(work.Content); i += 2 {
		k, v := work.Content[i], work.Content[i+1]
		j, known := index[e.from[k]]
		if !known {
			if prev < 0 || orig.Style&yaml.FlowStyle != 0 || !e.insertAfter(orig, prev, k, v) {
				return false
			}
			continue
		}
		if j < prev || e.from[v] != orig.Content[j+1] || !e.diff(orig.Content[j], k) || !e.diff(orig.Content[j+1], v) {
			return false
		}
		seen[j], prev = true, j
	}
	for j := 0; j+1 < len(orig.Content); j += 2 {
		if !seen[j] && !e.deletePair(orig, j) {
			return false
		}
	}
	return true
}

// replaceScalar replaces a single-line scalar's token, quoted as it was.
func (e *inPlace) replaceScalar(n *yaml.Node, value string) bool {
	line := n.Line - 1
	if line < 0 || line >= len(e.lines) {
		return false
	}
	text := e.lines[line]
	start := byteOffset(text, n.Column-1)
	if start < 0 {
		return false
	}
	var end int
	var replacement string
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		end = closingQuote(text, start, '"')
		if strings.ContainsAny(value, "\"\\") {
			return false
		}
		replacement = `"` + value + `"`
	case n.Style&yaml.SingleQuotedStyle != 0:
		end = closingQuote(text, start, '\'')
		if strings.Contains(value, "'") {
			return false
		}
		replacement = "'" + value + "'"
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return false
	default:
		if !strings.HasPrefix(text[start:], n.Value) {
			return false // a plain scalar over several lines
		}
		end = start + len(n.Value)
		replacement = plainOrQuoted(value)
	}
	if end < 0 {
		return false
	}
	e.scalars = append(e.scalars, scalarEdit{line: line, start: start, end: end, text: replacement})
	return true
}

// insertAfter renders the pair (k, v) as lines at the column of orig's
// keys, after the lines of orig's pair at index after.
func (e *inPlace) insertAfter(orig *yaml.Node, after int, k, v *yaml.Node) bool {
	column := orig.Content[0].Column - 1
	rendered, err := encodeNode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, v}}, e.layout)
	if err != nil {
		return false
	}
	last := e.endLine(orig.Content[after], orig.Content[after+1])
	pad := strings.Repeat(" ", column)
	for _, l := range strings.Split(strings.TrimSuffix(string(rendered), "\n"), "\n") {
		e.inserts[last] = append(e.inserts[last], pad+l)
	}
	return true
}

// deletePair removes the lines of orig's pair at index j, when they hold
// nothing else (the key starts its line).
func (e *inPlace) deletePair(orig *yaml.Node, j int) bool {
	k := orig.Content[j]
	if orig.Style&yaml.FlowStyle != 0 || k.Line < 1 || k.Line > len(e.lines) {
		return false
	}
	if strings.TrimSpace(e.lines[k.Line-1][:max(byteOffset(e.lines[k.Line-1], k.Column-1), 0)]) != "" {
		return false // a list item's first key ("- name: x")
	}
	for l := k.Line - 1; l <= e.endLine(k, orig.Content[j+1]); l++ {
		e.deletes[l] = true
	}
	return true
}

// endLine is the 0-based last line of a pair: the last line a node of its
// value starts on, then the lines indented past the key that follow (a
// block scalar's, a plain scalar's continuation), blank lines at the end
// left out.
func (e *inPlace) endLine(k, v *yaml.Node) int {
	last := maxLine(v) - 1
	if k.Line-1 > last {
		last = k.Line - 1
	}
	column := k.Column - 1
	end := last
	for l := last + 1; l < len(e.lines); l++ {
		text := e.lines[l]
		content := strings.TrimLeft(text, " ")
		if content == "" {
			continue
		}
		if len(text)-len(content) <= column {
			break
		}
		end = l
	}
	return end
}

// maxLine is the last line any node of a tree starts on.
func maxLine(n *yaml.Node) int {
	m := n.Line
	for _, c := range n.Content {
		m = max(m, maxLine(c))
	}
	return m
}

// apply makes the collected edits.
func (e *inPlace) apply() []byte {
	slices.SortFunc(e.scalars, func(a, b scalarEdit) int {
		if a.line != b.line {
			return a.line - b.line
		}
		return b.start - a.start // right to left within a line
	})
	lines := slices.Clone(e.lines)
	for _, s := range e.scalars {
		lines[s.line] = lines[s.line][:s.start] + s.text + lines[s.line][s.end:]
	}
	var out []string
	for i, l := range lines {
		if !e.deletes[i] {
			out = append(out, l)
		}
		out = append(out, e.inserts[i]...)
	}
	return []byte(strings.Join(out, "\n"))
}

// byteOffset is the byte offset of the rune at index col of s, or -1.
func byteOffset(s string, col int) int {
	for i := range s {
		if col == 0 {
			return i
		}
		col--
	}
	if col == 0 {
		return len(s)
	}
	return -1
}

// closingQuote is the offset past the quote that closes the quoted scalar
// starting at start, or -1.
func closingQuote(s string, start int, quote byte) int {
	if start >= len(s) || s[start] != quote {
		return -1
	}
	for i := start + 1; i < len(s); i++ {
		switch {
		case quote == '"' && s[i] == '\\':
			i++
		case s[i] == quote && quote == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == quote:
			return i + 1
		}
	}
	return -1
}

// plainOrQuoted is value as the encoder writes a scalar: plain where YAML
// reads it back as the same string, quoted otherwise.
func plainOrQuoted(value string) string {
	data, err := yaml.Marshal(value)
	if err != nil || !utf8.Valid(data) {
		return `"` + value + `"`
	}
	return string(bytes.TrimSuffix(data, []byte("\n")))
}

// encodeNode encodes a node with the document's layout.
func encodeNode(n *yaml.Node, l layout) ([]byte, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(l.spaces)
	if l.compact {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
