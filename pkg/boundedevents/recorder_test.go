package boundedevents

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime"
)

type captured struct{ notes []string }

func (c *captured) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	c.notes = append(c.notes, strings.Replace(note, "%s", args[0].(string), 1))
}

func TestRecorderShortensLongNotes(t *testing.T) {
	c := &captured{}
	r := Recorder(c)
	r.Eventf(nil, nil, "Warning", "ApplyRejected", "Apply", "refused: %s", strings.Repeat("é", 2000))
	r.Eventf(nil, nil, "Normal", "Ready", "Reconcile", "ready 100%")
	assert.LessOrEqual(t, len(c.notes[0]), MaxNoteBytes)
	assert.True(t, utf8.ValidString(c.notes[0]), "cut at a character boundary")
	assert.True(t, strings.HasPrefix(c.notes[0], "refused: éé"))
	assert.True(t, strings.HasSuffix(c.notes[0], " [...]"))
	assert.Equal(t, "ready 100%", c.notes[1], "a note without arguments is not formatted")
}
