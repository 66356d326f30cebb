package components

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/runtime"
)

// Inputs is everything Build needs, already fetched by the caller.
type Inputs struct {
	// ISVC is the InferenceService as read; Build does not modify it.
	ISVC   *v1beta1.InferenceService
	Config *config.Config
	// Mode is the deployment mode in force, decided once by the caller (it is
	// sticky once deployed); derived from the annotation and config when empty.
	Mode v1beta1.DeploymentMode
	// Runtime is the selection for a model predictor; nil for custom ones.
	Runtime *runtime.Selection
	// ServiceAccountSecrets are the Secrets attached to each ServiceAccount the
	// components use, by ServiceAccount name ("default" when unset).
	ServiceAccountSecrets map[string][]corev1.Secret
	// StorageConfig is the storage-config Secret, read when the model is
	// given as storage: {key, path} without storageUri; nil otherwise.
	StorageConfig *StorageConfig
	// ImageVolumes says whether the cluster mounts images as volumes, for
	// OCI models in the native mode; read only then.
	ImageVolumes ImageVolumes
	// PreviousRolledOutRevisions are the components' last rolled-out
	// revisions, as the owner's status remembers them (Knative mode).
	PreviousRolledOutRevisions map[v1beta1.ComponentType]string
	// CanaryRuntimes are the runtimes chosen for the canaries whose model
	// asks for another runtime than the stable predictor's, by canary name;
	// the others share Runtime.
	CanaryRuntimes map[string]*runtime.Selection
	// ReadyCanaries are the canary Deployments that had an available
	// replica when the reconcile began, by name.
	ReadyCanaries map[string]bool
	// StorageContainers are the cluster's ClusterStorageContainers: the
	// one a model's URI matches (or its predictor names) downloads it.
	StorageContainers []v1alpha1.ClusterStorageContainer
	// ModelCache is the model cache the predictor's model is on, nil for
	// none: the model is mounted from it, and the pods go to its nodes.
	ModelCache *ModelCache
}

// ModelCache is a model's cached copy: where it is, and the nodes that
// hold it.
type ModelCache struct {
	// Ref names the cache, for the status.
	Ref v1beta1.ModelCacheRef
	// Source is the storage URI the cache was chosen for: a model of
	// another URI (a canary's) is not on it. URI is the copy, a pvc:// URI
	// on the cache's claim.
	Source, URI string
	// Affinity is the node group's nodes.
	Affinity *corev1.NodeAffinity
}

// ImageVolumes is whether the cluster supports image volumes, and if not,
// why (its version, its feature gate).
type ImageVolumes struct {
	Supported bool
	Why       string
}

// StorageConfig is a storage-config Secret: its name, and its data, nil
// when it does not exist.
type StorageConfig struct {
	Name string
	Data map[string][]byte
}

// RuntimeRequest returns what runtime selection needs for the predictor, or
// nil when the predictor has no model (custom containers). isvc must be
// defaulted.
func RuntimeRequest(isvc *v1beta1.InferenceService) *runtime.Request {
	model := isvc.Spec.Predictor.Model
	if model == nil {
		return nil
	}
	req := &runtime.Request{ModelFormat: model.ModelFormat, Protocol: model.ProtocolVersion, MultiNode: isvc.Spec.Predictor.WorkerSpec != nil}
	if model.Runtime != nil {
		req.Runtime = *model.Runtime
	}
	return req
}

// Build resolves every component of the InferenceService, predictor first,
// then the canaries of spec.canary (Standard mode), in their order.
func Build(in Inputs) ([]*Component, error) {
	isvc := in.ISVC.DeepCopy()
	// The same defaulting as the webhook, in memory only: the reconciler never
	// writes the InferenceService's spec.
	v1beta1.Default(isvc)
	mode := in.Mode
	if mode == "" {
		mode = v1beta1.DeploymentModeOf(isvc, in.Config.DefaultDeploymentMode)
	}
	canaries, err := canaryServices(isvc, mode)
	if err != nil {
		return nil, err
	}
	if len(canaries) > 0 {
		// Ready canaries serve their share: the stable predictor needs fewer
		// replicas, as KServe lowers them.
		isvc.Spec.Predictor.MinReplicas = isvc.Spec.StableMinReplicas(func(i int) bool {
			return in.ReadyCanaries[v1beta1.PredictorChildName(isvc.Name, isvc.Spec.Canary[i].Predictor.Name)]
		})
	}
	applyServerDefaults(isvc, in.Runtime)
	var out []*Component
	for _, t := range isvc.Spec.Components() {
		c, err := buildComponent(isvc, t, in, mode)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	for i, canary := range canaries {
		entry := &isvc.Spec.Canary[i]
		cin := in
		if sel, ok := in.CanaryRuntimes[entry.Predictor.Name]; ok {
			cin.Runtime = sel
		}
		applyServerDefaults(canary, cin.Runtime)
		c, err := buildComponent(canary, v1beta1.PredictorComponent, cin, mode)
		var buildErr *BuildError
		if errors.As(err, &buildErr) {
			buildErr.Message = fmt.Sprintf("canary %q: %s", entry.Predictor.Name, buildErr.Message)
			return nil, buildErr
		}
		if err != nil {
			return nil, err
		}
		// A canary runs fixed replicas, as in KServe.
		c.SetAutoscaler(v1beta1.AutoscalerNone)
		c.Split = &Split{Canary: entry.Predictor.Name, Percent: entry.TrafficPercent, Ready: in.ReadyCanaries[c.Name]}
		out = append(out, c)
	}
	return out, nil
}

// canaryServices are the InferenceService as each canary of spec.canary
// runs it: its predictor the stable one with the entry over it. None in
// Knative mode, which validation refuses them in.
func canaryServices(isvc *v1beta1.InferenceService, mode v1beta1.DeploymentMode) ([]*v1beta1.InferenceService, error) {
	if mode != v1beta1.Standard {
		return nil, nil
	}
	out := make([]*v1beta1.InferenceService, 0, len(isvc.Spec.Canary))
	for i := range isvc.Spec.Canary {
		predictor, err := isvc.Spec.CanaryPredictor(i)
		if err != nil {
			return nil, &BuildError{v1beta1.PredictorComponent, v1beta1.InvalidPredictorSpec, err.Error()}
		}
		canary := isvc.DeepCopy()
		canary.Spec.Predictor = predictor
		out = append(out, canary)
	}
	return out, nil
}

// buildComponent resolves one component of isvc.
func buildComponent(isvc *v1beta1.InferenceService, t v1beta1.ComponentType, in Inputs, mode v1beta1.DeploymentMode) (*Component, error) {
	name := v1beta1.ChildName(isvc.Name, t)
	if t == v1beta1.PredictorComponent {
		name = v1beta1.PredictorChildName(isvc.Name, isvc.Spec.Predictor.Name)
	}
	c := &Component{
		PodSet:                    PodSet{Name: name, Selector: selectorFor(isvc, t)},
		Type:                      t,
		Owner:                     owner.Of(in.ISVC),
		ClusterLocal:              v1beta1.IsClusterLocal(in.ISVC),
		PreviousRolledOutRevision: in.PreviousRolledOutRevisions[t],
		Extension:                 *isvc.Spec.Extension(t).DeepCopy(),
		Mode:                      mode,
	}
	c.SetAutoscaler(v1beta1.AutoscalerClassOf(isvc, mode))
	var err error
	if t == v1beta1.PredictorComponent {
		err = buildPredictor(c, isvc, in)
	} else {
		err = buildAuxiliary(c, isvc, in.Config)
	}
	if err != nil {
		return nil, err
	}
	c.Ports = portsOf(c.Pod.Containers[0])
	if err := addAgent(c, isvc, in.Config); err != nil {
		return nil, err
	}
	c.Labels, c.Annotations = metadataFor(c, isvc)
	if t == v1beta1.PredictorComponent && mode == v1beta1.Standard {
		if err := addWorker(c, isvc, in); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// selectorFor is the selector of a component's pods: the InferenceService
// and the component type, or for a named predictor "{name}-predictor", so
// that the stable predictor's Service never selects a canary's pods, and a
// canary promoted by taking its name keeps its Deployment and pods.
func selectorFor(isvc *v1beta1.InferenceService, t v1beta1.ComponentType) map[string]string {
	value := string(t)
	if name := isvc.Spec.Predictor.Name; t == v1beta1.PredictorComponent && name != "" {
		value = name + "-" + string(t)
	}
	return map[string]string{v1beta1.InferenceServiceLabel: isvc.Name, v1beta1.ComponentLabel: value}
}

// buildAuxiliary resolves a transformer or explainer: its containers, with the
// predictor's address passed the way KServe does, so KServe images work.
func buildAuxiliary(c *Component, isvc *v1beta1.InferenceService, cfg *config.Config) error {
	pod := isvc.Spec.Pod(c.Type).ToCore()
	c.Pod = *pod.DeepCopy()
	if len(c.Pod.Containers) == 0 {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "a " + string(c.Type) + " needs at least one container"}
	}
	first := &c.Pod.Containers[0]
	predictorHost := v1beta1.PredictorChildName(isvc.Name, isvc.Spec.Predictor.Name) + "." + isvc.Namespace
	first.Args = appendArgIfMissing(first.Args, "--model_name", isvc.Name)
	first.Args = appendArgIfMissing(first.Args, "--predictor_host", predictorHost)
	first.Args = appendArgIfMissing(first.Args, "--http_port", "8080")
	defaultResources(first, cfg)
	return nil
}

// appendArgIfMissing appends "flag value" unless flag is already given, as
// "flag value" or "flag=value".
func appendArgIfMissing(args []string, flag, value string) []string {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return args
		}
	}
	return append(args, flag, value)
}

// defaultResources sets the config's default resources on a container that
// has none.
func defaultResources(c *corev1.Container, cfg *config.Config) {
	if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 {
		c.Resources = *cfg.DefaultResources.DeepCopy()
	}
}

// portsOf lists a container's ports, recognising gRPC ones by name; a
// container with no ports serves HTTP on the default port.
func portsOf(c corev1.Container) []Port {
	if len(c.Ports) == 0 {
		return []Port{{Name: "http", ContainerPort: DefaultServingPort}}
	}
	ports := make([]Port, 0, len(c.Ports))
	for _, p := range c.Ports {
		name := strings.ToLower(p.Name)
		ports = append(ports, Port{Name: p.Name, ContainerPort: p.ContainerPort,
			GRPC: name == "h2c" || strings.HasPrefix(name, "grpc")})
	}
	return ports
}
