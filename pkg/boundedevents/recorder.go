// Package boundedevents keeps Events within what the API server stores.
//
// The API server refuses an events.k8s.io Event whose note is over 1 KiB,
// and the recorder drops a refused Event without a word: a long message
// (an ApplyRejected one quoting the API server, which quotes the object)
// would be lost exactly when it matters. Recorder shortens each note to
// fit, keeping its beginning, which names the object and the reason.
package boundedevents

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// MaxNoteBytes is the longest note the API server stores.
const MaxNoteBytes = 1024

// ellipsis ends a shortened note.
const ellipsis = " [...]"

// Recorder returns a recorder that records through r with each note
// shortened to MaxNoteBytes.
func Recorder(r events.EventRecorder) events.EventRecorder { return recorder{r} }

type recorder struct{ next events.EventRecorder }

// Eventf formats the note, shortens it and records it.
func (r recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	text := note
	if len(args) > 0 {
		text = fmt.Sprintf(note, args...)
	}
	r.next.Eventf(regarding, related, eventtype, reason, action, "%s", Shorten(text))
}

// Shorten cuts s to MaxNoteBytes at a character boundary, marking the cut.
func Shorten(s string) string {
	if len(s) <= MaxNoteBytes {
		return s
	}
	cut := MaxNoteBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
