package tolerant

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type port struct {
	ContainerPort int32 `json:"containerPort"`
}

type container struct {
	Name   string            `json:"name"`
	Ports  []port            `json:"ports"`
	Env    map[string]string `json:"env"`
	Stdin  bool              `json:"stdin"`
	Weight *float64          `json:"weight"`
}

type object struct {
	Kind string      `json:"kind"`
	Spec []container `json:"spec"`
}

type partial struct {
	Kind string `json:"kind"`
}

// TestDecodeSaysWhatIsWrongInWords: a value of the wrong type is named by
// its path and said in plain words, not in Go's.
func TestDecodeSaysWhatIsWrongInWords(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"spec":[{"ports":[{"containerPort":"eighty"}]}]}`, "spec[0].ports[0].containerPort: must be a whole number, not a string"},
		{`{"spec":[{"name":8080}]}`, "spec[0].name: must be a string, not a number"},
		{`{"spec":[{"stdin":"yes"}]}`, "spec[0].stdin: must be true or false, not a string"},
		{`{"spec":[{"ports":{"containerPort":80}}]}`, "spec[0].ports: must be a list, not an object"},
		{`{"spec":[{"env":["A=1"]}]}`, "spec[0].env: must be an object (key: value pairs), not a list"},
		{`{"spec":[{"weight":"half"}]}`, "spec[0].weight: must be a number, not a string"},
		{`{"spec":["c"]}`, "spec[0]: must be an object (tolerant.container), not a string"},
	}
	for _, tt := range tests {
		var full object
		var p partial
		got, err := Decode([]byte(tt.data), &full, &p)
		assert.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.data)
	}
	var full object
	var p partial
	got, err := Decode([]byte(`{"kind":"K","spec":[{"name":"c"}]}`), &full, &p)
	assert.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, "c", full.Spec[0].Name)
}
