package presets

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// Merge merges specs in order, each over the ones before it, as a
// strategic merge patch of every field the later spec sets: scalars and
// objects' fields are replaced, a pod template's containers, volumes and
// environment merged by name, other lists replaced whole.
func Merge(specs ...v1alpha2.LLMInferenceServiceSpec) (v1alpha2.LLMInferenceServiceSpec, error) {
	if len(specs) == 0 {
		return v1alpha2.LLMInferenceServiceSpec{}, nil
	}
	out := specs[0]
	for _, s := range specs[1:] {
		var err error
		if out, err = mergeTwo(out, s); err != nil {
			return v1alpha2.LLMInferenceServiceSpec{}, err
		}
	}
	return out, nil
}

// zeroSpec is the JSON of an empty spec: the patch of a spec is its
// difference from it, so every field the spec sets is in the patch.
var zeroSpec, _ = json.Marshal(v1alpha2.LLMInferenceServiceSpec{})

func mergeTwo(base, override v1alpha2.LLMInferenceServiceSpec) (v1alpha2.LLMInferenceServiceSpec, error) {
	baseJSON, err := json.Marshal(base)
	if err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, err
	}
	withEmptyContainers(&override)
	overrideJSON, err := json.Marshal(override)
	if err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(zeroSpec, overrideJSON, v1alpha2.LLMInferenceServiceSpec{})
	if err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, fmt.Errorf("make a patch of the spec: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(baseJSON, patch, v1alpha2.LLMInferenceServiceSpec{})
	if err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, fmt.Errorf("merge the spec: %w", err)
	}
	var out v1alpha2.LLMInferenceServiceSpec
	if err := json.Unmarshal(merged, &out); err != nil {
		return v1alpha2.LLMInferenceServiceSpec{}, fmt.Errorf("read the merged spec: %w", err)
	}
	return out, nil
}

// withEmptyContainers gives every pod template that lists no containers an
// empty list, as KServe's defaulting does: a template that only sets pod
// fields then merges as a template, not as a missing one.
func withEmptyContainers(s *v1alpha2.LLMInferenceServiceSpec) {
	for _, t := range []*corev1.PodSpec{s.Template, s.Worker} {
		if t != nil && t.Containers == nil {
			t.Containers = []corev1.Container{}
		}
	}
	if p := s.Prefill; p != nil {
		for _, t := range []*corev1.PodSpec{p.Template, p.Worker} {
			if t != nil && t.Containers == nil {
				t.Containers = []corev1.Container{}
			}
		}
	}
	if r := s.Router; r != nil && r.Scheduler != nil && r.Scheduler.Template != nil && r.Scheduler.Template.Containers == nil {
		r.Scheduler.Template.Containers = []corev1.Container{}
	}
}
