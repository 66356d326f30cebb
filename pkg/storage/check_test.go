package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// TestCheckURIs: the storage URIs of an LLMInferenceService's spec are
// checked here, by their fields; templates are left to the render.
func TestCheckURIs(t *testing.T) {
	spec := &v1alpha2.LLMInferenceServiceSpec{Model: v1alpha2.LLMModelSpec{URI: "ftp://models/llama", LoRA: &v1alpha2.LoRASpec{
		Adapters: []v1alpha2.LLMModelSpec{{URI: "hf://org/sql"}, {URI: "pvc://"}, {URI: "{{ .Spec.Model.URI }}/x"}}}}}
	var got []string
	for _, e := range CheckURIs(v1alpha2.StorageURIs(spec)) {
		got = append(got, e.Error())
	}
	assert.Equal(t, []string{
		`spec.model.uri: Invalid value: "ftp://models/llama": storageUri scheme "ftp" is not supported; use gs://, s3://, http(s)://, hf://, pvc:// or oci:// (oci+native://, oci+fetch://)`,
	}, got[:1])
	assert.Len(t, got, 2, "the malformed adapter too; the template is left alone")
	assert.Contains(t, got[1], "spec.model.lora.adapters[1].uri")
}
