package bench

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/dev"
	"github.com/serval-dev/serval/internal/sandbox"
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
	// upstreamCRDs installs Gateway API's, the Inference Extension's,
	// Knative's and Istio's CRDs in the cluster; the children of their
	// kinds are then created by the floor too.
	upstreamCRDs bool
	// podsPerService sizes the nodes (1 when 0).
	podsPerService int
	// play, when set, runs beside both runs until they end: it stands in
	// for a controller the sandbox does not run.
	play  func(ctx context.Context, sb *sandbox.Sandbox) error
	list  func() client.ObjectList
	ready func(client.Object) bool
	setup func(ctx context.Context, c client.Client, root string) error
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
		uncached: llmUncached, list: llmList, ready: llmReady, setup: installPresets,
	},
	"llm-router": {
		kind: "LLMInferenceService", sample: "config/samples/llm-opt-125m-scheduler.yaml", label: v1alpha2.LLMInferenceServiceLabel,
		controller: "llminferenceservice", description: "KServe's opt-125m CPU sample with a managed route and the endpoint picker, the sandbox playing the Gateway",
		uncached: llmUncached, list: llmList, ready: llmReady, setup: installPresets, upstreamCRDs: true, podsPerService: 2,
		play: func(ctx context.Context, sb *sandbox.Sandbox) error {
			gateway := types.NamespacedName{Namespace: dev.ManagerNamespace, Name: "serval-ingress-gateway"}
			// The floor's cluster has no namespace of Serval's.
			err := sb.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gateway.Namespace}})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			if err := sb.ProgramGateway(ctx, gateway); err != nil {
				return err
			}
			return sb.AcceptInferenceTraffic(ctx, gateway, Namespace)
		},
	},
}

// The LLM subjects' parts.
var (
	// llmUncached: the serving certificate's Secret and the picker's
	// ServiceAccount.
	llmUncached = []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret"), corev1.SchemeGroupVersion.WithKind("ServiceAccount")}
	llmList     = func() client.ObjectList { return &v1alpha2.LLMInferenceServiceList{} }
	llmReady    = func(obj client.Object) bool {
		svc, ok := obj.(*v1alpha2.LLMInferenceService)
		return ok && meta.IsStatusConditionTrue(svc.Status.Conditions, v1alpha2.ConditionReady)
	}
)

// installPresets installs the LLM presets in Serval's namespace, as the
// chart does.
func installPresets(ctx context.Context, c client.Client, root string) error {
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
}

// subjectOf is the subject of a kind name; isvc when empty.
func subjectOf(kind string) (subject, error) {
	if kind == "" {
		kind = "isvc"
	}
	s, ok := subjects[kind]
	if !ok {
		return subject{}, fmt.Errorf("unknown --kind %q: use isvc, llm or llm-router", kind)
	}
	return s, nil
}
