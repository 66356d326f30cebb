package bench

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// subject is the kind a run creates N of: its sample, the label its
// children carry, how it is listed and when it is Ready, and what the
// cluster needs before it (a runtime, the presets).
type subject struct {
	kind, sample, label, controller, description string
	// uncached are the kinds of children the manager does not watch (so
	// not in the registry), which the floor must create too.
	uncached []schema.GroupVersionKind
	list     func() client.ObjectList
	ready    func(client.Object) bool
	setup    func(ctx context.Context, c client.Client, root string) error
}

// subjects are the kinds serval bench measures, by --kind.
var subjects = map[string]subject{
	"isvc": {
		kind: "InferenceService", sample: "config/samples/sklearn.yaml", label: v1beta1.InferenceServiceLabel,
		controller: "inferenceservice", description: "Standard mode with an Ingress",
		list: func() client.ObjectList { return &v1beta1.InferenceServiceList{} },
		ready: func(obj client.Object) bool {
			isvc, ok := obj.(*v1beta1.InferenceService)
			return ok && meta.IsStatusConditionTrue(isvc.Status.Conditions, v1beta1.ConditionReady)
		},
		setup: func(ctx context.Context, c client.Client, root string) error {
			return dev.ApplyFile(ctx, c, filepath.Join(root, "config/runtimes/kserve-sklearnserver.yaml"), "")
		},
	},
	"llm": {
		kind: "LLMInferenceService", sample: "config/samples/llm-opt-125m.yaml", label: v1alpha2.LLMInferenceServiceLabel,
		controller: "llminferenceservice", description: "KServe's opt-125m CPU sample, without a router",
		uncached: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("ServiceAccount")},
		list:     func() client.ObjectList { return &v1alpha2.LLMInferenceServiceList{} },
		ready: func(obj client.Object) bool {
			svc, ok := obj.(*v1alpha2.LLMInferenceService)
			return ok && meta.IsStatusConditionTrue(svc.Status.Conditions, v1alpha2.ConditionReady)
		},
		setup: func(ctx context.Context, c client.Client, root string) error {
			files, err := filepath.Glob(filepath.Join(root, "config/llmisvcconfig/*.yaml"))
			if err != nil {
				return err
			}
			for _, f := range files {
				if err := dev.ApplyFile(ctx, c, f, dev.ManagerNamespace); err != nil {
					return err
				}
			}
			return nil
		},
	},
}

// subjectOf is the subject of a kind name; isvc when empty.
func subjectOf(kind string) (subject, error) {
	if kind == "" {
		kind = "isvc"
	}
	s, ok := subjects[kind]
	if !ok {
		return subject{}, fmt.Errorf("unknown --kind %q: use isvc or llm", kind)
	}
	return s, nil
}
