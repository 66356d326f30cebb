package components

import (
	"encoding/json"
	"testing"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// FuzzBuild decodes an InferenceService spec from fuzz input and builds it
// against the sklearn runtime: Build may fail, but never panic, and a build
// that succeeds always has a container per component.
func FuzzBuild(f *testing.F) {
	f.Add(`{"predictor":{"model":{"modelFormat":{"name":"sklearn"},"storageUri":"gs://b/m"}}}`)
	f.Add(`{"predictor":{"sklearn":{"storageUri":"pvc://c/p","args":["{{.Name}}"]}},"transformer":{"containers":[{"name":"t"}]}}`)
	f.Add(`{"predictor":{"containers":[{"name":"c","ports":[{"name":"h2c","containerPort":1}]}]}}`)
	f.Add(`{"predictor":{"model":{"modelFormat":{"name":"x"},"runtimeVersion":"v","env":[{"name":"A","value":"{{.Labels.a}}"}]}}}`)
	cfg := config.Default()
	sel := selection(sklearnRuntime(), v1beta1.ProtocolV1)
	f.Fuzz(func(t *testing.T, spec string) {
		isvc := isvcWith("fuzz", v1beta1.InferenceServiceSpec{})
		if err := json.Unmarshal([]byte(spec), &isvc.Spec); err != nil {
			return
		}
		if len(v1beta1.Validate(isvc, v1beta1.ValidationOptions{})) > 0 {
			return
		}
		comps, err := Build(Inputs{ISVC: isvc, Config: cfg, Runtime: sel})
		if err != nil {
			return
		}
		for _, c := range comps {
			if len(c.Pod.Containers) == 0 {
				t.Fatalf("component %s has no container", c.Type)
			}
		}
	})
}
