package migrate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLayoutOf(t *testing.T) {
	tests := []struct {
		name, doc string
		want      layout
	}{
		{"two spaces, lists indented", "spec:\n  predictor:\n    containers:\n      - name: c\n", layout{spaces: 2}},
		{"two spaces, compact lists", "spec:\n  predictor:\n    containers:\n    - name: c\n", layout{spaces: 2, compact: true}},
		{"four spaces", "metadata:\n    name: x\nspec:\n    containers:\n        - name: c\n", layout{spaces: 4}},
		{"a comment and a block scalar first", "# head\nmetadata:\n  annotations:\n    note: |\n        long\n        text\nspec:\n  args:\n  - a\n", layout{spaces: 2, compact: true}},
		{"a list item's nested key", "items:\n- name: a\n  spec:\n    x: 1\n", layout{spaces: 2, compact: true}},
		{"flow style only", "spec: {predictor: {sklearn: {}}}\n", defaultLayout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, layoutOf([]byte(tt.doc)))
		})
	}
}

// TestMigrationKeepsTheIndentation: a document written with four spaces
// comes out with four; one with compact lists (kubectl's style) with
// compact lists.
func TestMigrationKeepsTheIndentation(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: %s\nkind: InferenceService\nmetadata:\n    name: iris\nspec:\n    predictor:\n        containers:\n            - name: kserve-container\n              image: example.com/model:1\n",
		"apiVersion: %s\nkind: InferenceService\nmetadata:\n  name: iris\nspec:\n  predictor:\n    containers:\n    - name: kserve-container\n      image: example.com/model:1\n",
	} {
		out, _, err := File("in.yaml", []byte(fmt.Sprintf(doc, "serving.kserve.io/v1beta1")), Options{})
		assert.NoError(t, err)
		assert.Equal(t, fmt.Sprintf(doc, "serving.serval.dev/v1beta1"), string(out))
	}
}
