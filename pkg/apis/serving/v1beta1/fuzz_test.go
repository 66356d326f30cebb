package v1beta1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// FuzzDefaultAndValidate decodes an InferenceService from fuzz input and
// checks that defaulting and validation never panic, that defaulting is
// idempotent, and that defaulting keeps a valid object valid. The seed corpus
// is in testdata/fuzz/FuzzDefaultAndValidate.
func FuzzDefaultAndValidate(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"iris","namespace":"default"},"spec":{"predictor":{"sklearn":{"storageUri":"gs://b/m"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		isvc := &InferenceService{}
		if err := json.Unmarshal(data, isvc); err != nil {
			return
		}
		for _, mode := range []DeploymentMode{Standard, Knative} {
			opts := ValidationOptions{DefaultDeploymentMode: mode}
			validBefore := len(Validate(isvc, opts)) == 0
			once := isvc.DeepCopy()
			Default(once)
			twice := once.DeepCopy()
			Default(twice)
			if !equality.Semantic.DeepEqual(once, twice) {
				t.Fatalf("defaulting is not idempotent for %s", data)
			}
			if errs := Validate(once, opts); validBefore && len(errs) > 0 {
				t.Fatalf("defaulting made a valid object invalid: %v\ninput: %s", errs, data)
			}
			_ = ValidateUpdate(isvc, once, opts)
		}
	})
}
