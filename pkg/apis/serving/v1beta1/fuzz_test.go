package v1beta1

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
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

// FuzzTolerantDecode checks the promise that one malformed object never
// stops a list: whatever the stored spec holds, an object whose metadata
// decodes decodes without error, with DecodeError set exactly when the spec
// does not decode, and its name kept so that it can be reported.
func FuzzTolerantDecode(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"iris"},"spec":{"predictor":{"model":{"modelFormat":{"name":"sklearn"},"resources":{"requests":{"cpu":"lots"}}}}}}`))
	f.Add([]byte(`{"metadata":{"name":"p"},"spec":{"predictor":{"containers":[{"name":"c","ports":[{"containerPort":"8080"}]}]}}}`))
	f.Add([]byte(`{"metadata":{"name":"s"},"spec":{"predictor":{"deploymentStrategy":{"rollingUpdate":{"maxSurge":{"x":1}}}}},"status":{"url":"http://s"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var meta struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta      `json:"metadata"`
			Status          InferenceServiceStatus `json:"status"`
		}
		metaErr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &meta)
		isvc := &InferenceService{}
		err := isvc.UnmarshalJSON(data)
		if metaErr == nil && err != nil {
			t.Fatalf("an object whose metadata decodes failed to decode: %v\ninput: %s", err, data)
		}
		if err != nil {
			return
		}
		var full inferenceServiceFields
		fullErr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &full)
		if (fullErr != nil) != (isvc.DecodeError != "") {
			t.Fatalf("DecodeError %q, but the full decode said %v\ninput: %s", isvc.DecodeError, fullErr, data)
		}
		if isvc.DecodeError != "" && isvc.Name != meta.Metadata.Name {
			t.Fatalf("the name %q was lost (got %q)\ninput: %s", meta.Metadata.Name, isvc.Name, data)
		}
	})
}
