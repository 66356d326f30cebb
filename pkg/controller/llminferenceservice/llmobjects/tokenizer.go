package llmobjects

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
	"github.com/serval-dev/serval/pkg/storage"
)

// Tokenizer is the standalone tokenizer: vLLM's render server, which the
// endpoint picker's token-producer plugin asks to tokenize each prompt.
const Tokenizer v1beta1.ComponentType = "tokenizer"

const (
	// TokenizerModelPath is where the tokenizer's pod sees the model, and
	// the model name the token-producer asks for (KServe's).
	TokenizerModelPath = "/mnt/models/base"
	tokenizerPort      = 8000
	tokenizerPortName  = "render-http"
)

// TokenizerName is the tokenizer's Deployment and Service, KServe's name.
func TokenizerName(svc string) string { return kmeta.ChildName(svc, "-tokenizer") }

// HasTokenizer reports whether Serval runs a standalone tokenizer for the
// spec: a picker of Serval's whose tokenizer is configured or whose config
// uses a plugin that needs one.
func HasTokenizer(spec *v1alpha2.LLMInferenceServiceSpec) bool {
	return HasScheduler(spec) && presets.TokenizerEnabled(spec)
}

// TokenizerURL is the tokenizer's address for the picker.
func TokenizerURL(in Inputs) string {
	return fmt.Sprintf("%s://%s.%s.svc.cluster.local:%d", Scheme(in.TLS), TokenizerName(in.Service.Name), in.Service.Namespace, tokenizerPort)
}

// TokenizerComponent is the tokenizer as a Component: the combined
// tokenizer template, one replica, with the model (without its LoRA
// adapters) at TokenizerModelPath.
func TokenizerComponent(in Inputs) (*components.Component, error) {
	svc := in.Service
	pod := corev1.PodSpec{}
	if t := in.Spec.Router.Scheduler.Tokenizer; t != nil && t.Template != nil {
		pod = *t.Template.DeepCopy()
	}
	if len(pod.Containers) == 0 {
		return nil, fmt.Errorf("the combined spec has no tokenizer template with a container: is the preset %s installed?", presets.Tokenizer)
	}
	mainFirst(&pod)
	c := newComponent(svc, Tokenizer, TokenizerName(svc.Name), pod, commonLabels(svc, Tokenizer), nil, nil, nil)
	if si := in.Spec.StorageInitializer; si != nil && si.Enabled != nil && !*si.Enabled {
		return c, nil
	}
	loc, err := storage.Parse(in.Spec.Model.URI)
	if err != nil {
		return nil, &components.BuildError{Component: Tokenizer, Reason: v1beta1.UnsupportedStorageURI, Message: err.Error()}
	}
	if loc.Kind == storage.OCI {
		return nil, &components.BuildError{Component: Tokenizer, Reason: v1beta1.UnsupportedStorageURI, Message: fmt.Sprintf(
			"the standalone tokenizer reads the model at %s, where a model stored as an OCI image (%s) cannot be mounted: use hf://, s3:// or pvc:// for it",
			TokenizerModelPath, in.Spec.Model.URI)}
	}
	if err := components.AddModels(c, []storage.Entry{{Location: loc, MountPath: TokenizerModelPath}}, in.Storage, in.Credentials); err != nil {
		return nil, err
	}
	return c, nil
}

// TokenizerObjects are the tokenizer's Deployment and its Service.
func TokenizerObjects(in Inputs, c *components.Component) ([]apply.Object, error) {
	dep, err := standard.MakeDeployment(c)
	if err != nil {
		return nil, err
	}
	svc := in.Service
	service := corev1ac.Service(c.Name, svc.Namespace).
		WithLabels(c.Labels).WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithSpec(corev1ac.ServiceSpec().WithSelector(c.Selector).
			WithPorts(corev1ac.ServicePort().WithName(tokenizerPortName).WithPort(tokenizerPort).
				WithTargetPort(intstr.FromString(tokenizerPortName)).WithProtocol(corev1.ProtocolTCP)))
	return []apply.Object{
		{GVK: standard.DeploymentKind.GVK, Key: c.Key(), Spec: dep},
		{GVK: standard.ServiceKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: c.Name}, Spec: service},
	}, nil
}
