package v1beta1

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStopWarnings: a stop value other than true or false (any case) is
// warned of, since it leaves the service running, whichever kind carries
// it.
func TestStopWarnings(t *testing.T) {
	for _, v := range []string{"yes", "1", "on", " true", "true ", "t"} {
		w := StopWarnings(map[string]string{StopAnnotation: v})
		if assert.Len(t, w, 1, v) {
			assert.Contains(t, w[0], `only "true" (any case) stops the service; it keeps running`)
		}
	}
	for _, v := range []string{"true", "TRUE", "false", "False"} {
		assert.Empty(t, StopWarnings(map[string]string{StopAnnotation: v}), v)
	}
	assert.Empty(t, StopWarnings(nil))
}
