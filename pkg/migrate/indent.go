package migrate

import (
	"bufio"
	"bytes"
	"strings"
)

// layout is how a document indents: the spaces a nested mapping adds, and
// whether a list under a key starts at the key's column ("compact", as
// kubectl and many of KServe's docs write it) or one indent in. (With
// more than two spaces the encoder puts a compact list's dash two spaces
// in, the nearest it can.)
type layout struct {
	spaces  int
	compact bool
}

// defaultLayout is used where the document shows nothing to go by.
var defaultLayout = layout{spaces: 2}

// layoutOf reads the layout of a YAML document from its first key with a
// nested mapping and its first key with a list. Flow style and block
// scalars tell nothing and are skipped.
func layoutOf(raw []byte) layout {
	l := defaultLayout
	var spacesFound, listFound bool
	prevIndent, prevOpens := 0, false // the last key line, and whether it ends with ":"
	inBlockScalar, blockIndent := false, 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() && !(spacesFound && listFound) {
		line := sc.Text()
		content := strings.TrimLeft(line, " ")
		if content == "" || strings.HasPrefix(content, "#") {
			continue
		}
		indent := len(line) - len(content)
		if inBlockScalar {
			if indent > blockIndent {
				continue
			}
			inBlockScalar = false
		}
		if prevOpens {
			switch {
			case strings.HasPrefix(content, "- ") || content == "-":
				if !listFound {
					l.compact, listFound = indent == prevIndent, true
				}
			case indent > prevIndent && !spacesFound:
				l.spaces, spacesFound = indent-prevIndent, true
			}
		}
		trimmed := strings.TrimSpace(stripComment(content))
		item := strings.TrimPrefix(trimmed, "- ")
		keyIndent := indent
		if item != trimmed {
			keyIndent += 2
		}
		prevIndent, prevOpens = keyIndent, strings.HasSuffix(item, ":") && !strings.HasPrefix(item, "-")
		if strings.HasSuffix(item, "|") || strings.HasSuffix(item, ">") || strings.HasSuffix(item, "|-") || strings.HasSuffix(item, ">-") {
			inBlockScalar, blockIndent = true, indent
		}
	}
	if l.spaces < 2 || l.spaces > 8 {
		l.spaces = defaultLayout.spaces
	}
	return l
}

// stripComment drops a trailing " # comment" from a line.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}
