package components

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
)

// buildPredictor resolves the predictor: custom containers as written, or the
// runtime's pod merged with the model's fields, with the model's storage.
func buildPredictor(c *Component, isvc *v1beta1.InferenceService, in Inputs) error {
	p := &isvc.Spec.Predictor
	pod := p.PodSpec.ToCore()
	c.Pod = *pod.DeepCopy()
	if p.IsCustom() {
		defaultResources(&c.Pod.Containers[0], in.Config)
		// As on KServe, a STORAGE_URI env var on the custom container asks
		// for the model to be fetched into /mnt/models.
		if uri := envValue(c.Pod.Containers[0].Env, storageURIEnv); uri != "" {
			uri = useModelCache(c, in, uri)
			return addStorage(c, isvc, in, uri, storage.Credentials{
				StorageConfigSecret:   isvc.Annotations[v1beta1.StorageSecretNameAnnotation],
				ServiceAccountSecrets: in.ServiceAccountSecrets[serviceAccountOf(c)],
			})
		}
		return nil
	}
	if p.Model == nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "the predictor needs exactly one of model, a framework key or containers"}
	}
	if in.Runtime == nil || len(in.Runtime.Runtime.Spec.Containers) == 0 {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "the selected runtime has no containers"}
	}
	c.Runtime = in.Runtime
	rt := in.Runtime.Runtime.Spec
	runtimeServer := rt.Containers[0].DeepCopy()
	server := mergeServer(runtimeServer, &p.Model.PredictorExtensionSpec)
	containers := []corev1.Container{server}
	for i := range rt.Containers[1:] {
		containers = append(containers, *rt.Containers[1+i].DeepCopy())
	}
	for _, extra := range c.Pod.Containers {
		// A predictor container named like one of the runtime's (the model
		// server, or a sidecar it ships) is merged over it, as in KServe;
		// another is added.
		if i := slices.IndexFunc(containers[:len(rt.Containers)], func(rc corev1.Container) bool { return rc.Name == extra.Name }); i >= 0 {
			containers[i] = overrideContainer(containers[i], extra)
			continue
		}
		containers = append(containers, extra)
	}
	defaultResources(&containers[0], in.Config)
	c.Pod.Containers = containers
	mergeRuntimePod(&c.Pod, &rt.ServingRuntimePodSpec)
	if err := renderPlaceholders(&c.Pod, isvc, in.Config.Templates); err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, err.Error()}
	}
	if len(p.StorageURIs) > 0 {
		return addStorageURIs(c, in, p.StorageURIs, credentialsFor(c, isvc, in))
	}
	uri, err := modelURI(p.Model, in.StorageConfig)
	if err != nil {
		return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, err.Error()}
	}
	if uri == "" {
		return nil
	}
	uri = useModelCache(c, in, uri)
	return addStorage(c, isvc, in, uri, credentialsFor(c, isvc, in))
}

// useModelCache returns the URI of the model's cached copy when the
// predictor uses a cache, and sends its pods to the cache's nodes;
// otherwise uri as it is.
func useModelCache(c *Component, in Inputs, uri string) string {
	mc := in.ModelCache
	if mc == nil || mc.Source != uri {
		return uri
	}
	ref := mc.Ref
	c.ModelCache = &ref
	RequireNodeAffinity(&c.Pod, mc.Affinity)
	return mc.URI
}

// RequireNodeAffinity adds a required node affinity to a pod's, both to
// hold: each of the pod's terms (ORed) gets the new terms' requirements,
// one combination per pair.
func RequireNodeAffinity(pod *corev1.PodSpec, add *corev1.NodeAffinity) {
	if add == nil || add.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return
	}
	if pod.Affinity == nil {
		pod.Affinity = &corev1.Affinity{}
	}
	if pod.Affinity.NodeAffinity == nil {
		pod.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Affinity.NodeAffinity
	addTerms := add.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = add.RequiredDuringSchedulingIgnoredDuringExecution.DeepCopy()
		return
	}
	var terms []corev1.NodeSelectorTerm
	for _, a := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, b := range addTerms {
			t := *a.DeepCopy()
			t.MatchExpressions = append(t.MatchExpressions, b.DeepCopy().MatchExpressions...)
			t.MatchFields = append(t.MatchFields, b.DeepCopy().MatchFields...)
			terms = append(terms, t)
		}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
}

// StorageURIOf is the predictor's storage URI as written: the model's
// storageUri, or a custom container's STORAGE_URI; "" for none. isvc must
// be defaulted.
func StorageURIOf(isvc *v1beta1.InferenceService) string {
	p := &isvc.Spec.Predictor
	switch {
	case p.Model != nil && p.Model.StorageURI != nil:
		return *p.Model.StorageURI
	case p.IsCustom():
		return envValue(p.Containers[0].Env, storageURIEnv)
	}
	return ""
}

// storageURIEnv is the env var of a custom container that KServe reads as
// its storage URI.
const storageURIEnv = "STORAGE_URI"

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// modelURI is the model's storage URI: storageUri, or one built from
// storage: {key, path, parameters} and the storage-config Secret, as KServe
// builds it; "" when the model has neither (the runtime brings it).
func modelURI(m *v1beta1.ModelSpec, secret *StorageConfig) (string, error) {
	if m.StorageURI != nil {
		return *m.StorageURI, nil
	}
	if m.Storage == nil {
		return "", nil
	}
	if secret == nil || secret.Data == nil {
		name := storage.DefaultStorageConfigSecret
		if secret != nil {
			name = secret.Name
		}
		return "", fmt.Errorf("storage without storageUri reads the Secret %s, which does not exist in the namespace; create it or give storageUri", name)
	}
	s := m.Storage
	key, path, params := "", "", map[string]string(nil)
	if s.StorageKey != nil {
		key = *s.StorageKey
	}
	if s.Path != nil {
		path = *s.Path
	}
	if s.Parameters != nil {
		params = *s.Parameters
	}
	return storage.URIFromStorageSpec(secret.Name, secret.Data, storage.StorageSpecKey(key, params), path, params)
}

// mergeServer merges the model's container fields into the runtime's model
// server container: the InferenceService's fields win, args are appended and
// env is merged by name; runtimeVersion replaces the image tag. Resources come
// from the InferenceService, else the runtime (else the config defaults, set
// by the caller).
func mergeServer(server *corev1.Container, model *v1beta1.PredictorExtensionSpec) corev1.Container {
	mc := model.Container.ToCore()
	merged := overrideContainer(*server, mc)
	if model.RuntimeVersion != nil {
		merged.Image = withTag(merged.Image, *model.RuntimeVersion)
	}
	return merged
}

// overrideContainer returns base with the fields set in override applied.
func overrideContainer(base, o corev1.Container) corev1.Container {
	if o.Image != "" {
		base.Image = o.Image
	}
	if len(o.Command) > 0 {
		base.Command = o.Command
	}
	base.Args = append(base.Args, o.Args...)
	base.Env = mergeEnv(base.Env, o.Env)
	base.EnvFrom = append(base.EnvFrom, o.EnvFrom...)
	if len(o.Resources.Requests) > 0 || len(o.Resources.Limits) > 0 {
		base.Resources = o.Resources
	}
	if len(o.Ports) > 0 {
		base.Ports = o.Ports
	}
	base.VolumeMounts = append(base.VolumeMounts, o.VolumeMounts...)
	setIfNotNil(&base.LivenessProbe, o.LivenessProbe)
	setIfNotNil(&base.ReadinessProbe, o.ReadinessProbe)
	setIfNotNil(&base.StartupProbe, o.StartupProbe)
	setIfNotNil(&base.Lifecycle, o.Lifecycle)
	setIfNotNil(&base.SecurityContext, o.SecurityContext)
	if o.WorkingDir != "" {
		base.WorkingDir = o.WorkingDir
	}
	if o.ImagePullPolicy != "" {
		base.ImagePullPolicy = o.ImagePullPolicy
	}
	return base
}

func setIfNotNil[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

// mergeEnv overlays env vars by name, keeping base's order and appending new ones.
func mergeEnv(base, overlay []corev1.EnvVar) []corev1.EnvVar {
	out := append([]corev1.EnvVar(nil), base...)
	for _, e := range overlay {
		replaced := false
		for i := range out {
			if out[i].Name == e.Name {
				out[i], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// addStorage wires a storage URI into the pod: the model appears in the
// first container at /mnt/models.
func addStorage(c *Component, isvc *v1beta1.InferenceService, in Inputs, uri string, creds storage.Credentials) error {
	sc, err := storage.SelectContainer(uri, ptr.Deref(isvc.Spec.Predictor.StorageContainerName, ""), in.StorageContainers)
	if err != nil {
		return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, err.Error()}
	}
	var patch *corev1.Container
	if sc != nil {
		patch = &sc.Spec.Container
	}
	return addModel(c, uri, initializerOf(in), creds, in.ImageVolumes, patch)
}

// AddModel wires a model's storage URI into a component's pod, as for an
// InferenceService's predictor: downloaded by the storage initializer,
// mounted from its claim, or run as a modelcar or image volume; the model
// appears in the first container at /mnt/models.
func AddModel(c *Component, uri string, init storage.Initializer, creds storage.Credentials, iv ImageVolumes) error {
	return addModel(c, uri, init, creds, iv, nil)
}

// addModel is AddModel with the container of a ClusterStorageContainer
// (nil for none) merged over the storage initializer; a URI of a scheme
// Serval does not know is then downloaded by that container.
func addModel(c *Component, uri string, init storage.Initializer, creds storage.Credentials, iv ImageVolumes, storageContainer *corev1.Container) error {
	loc, err := storage.ParseWith(uri, storageContainer != nil)
	if err != nil {
		return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, err.Error()}
	}
	if loc.Kind == storage.OCI && init.ModeOf(loc) == storage.OCINative && !iv.Supported {
		return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, fmt.Sprintf(
			"%s asks for an image volume, which this cluster cannot mount: %s; use oci:// (a modelcar) or oci+fetch:// instead", uri, iv.Why)}
	}
	plan := storage.MakePlan(loc, init, creds)
	if storageContainer != nil {
		if err := plan.UseContainer(*storageContainer); err != nil {
			return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, err.Error()}
		}
	}
	return applyPlan(c, plan)
}

// addStorageURIs wires storageUris into the pod: each model at its path.
func addStorageURIs(c *Component, in Inputs, uris []v1beta1.StorageURISpec, creds storage.Credentials) error {
	entries := make([]storage.Entry, len(uris))
	for i, u := range uris {
		loc, err := storage.Parse(u.URI)
		if err != nil {
			return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, fmt.Sprintf("storageUris[%d]: %v", i, err)}
		}
		entries[i] = storage.Entry{Location: loc, MountPath: u.MountPath}
	}
	return AddModels(c, entries, initializerOf(in), creds)
}

// AddModels wires several models into a component's pod, each at its
// path: one storage initializer downloads those not on a claim into one
// volume, a claim is mounted at its path (see storage.MakeMultiPlan).
func AddModels(c *Component, entries []storage.Entry, init storage.Initializer, creds storage.Credentials) error {
	plan, err := storage.MakeMultiPlan(entries, init, creds)
	if err != nil {
		return &BuildError{c.Type, v1beta1.UnsupportedStorageURI, err.Error()}
	}
	return applyPlan(c, plan)
}

func initializerOf(in Inputs) storage.Initializer {
	si := in.Config.StorageInitializer
	return storage.Initializer{Image: si.Image, Resources: si.Resources, Modelcar: si.Modelcar, CABundle: si.CABundle()}
}

// applyPlan adds a storage plan to the pod.
func applyPlan(c *Component, plan storage.Plan) error {
	for _, v := range c.Pod.Volumes {
		if strings.HasPrefix(v.Name, storage.VolumeName) {
			return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, fmt.Sprintf(
				"volume name %s is reserved for the model storage", v.Name)}
		}
	}
	server := &c.Pod.Containers[0]
	c.Pod.Volumes = append(c.Pod.Volumes, plan.Volumes...)
	if plan.InitContainer != nil {
		c.Pod.InitContainers = append([]corev1.Container{*plan.InitContainer}, c.Pod.InitContainers...)
	}
	server.VolumeMounts = append(append(server.VolumeMounts, plan.ServerMount), plan.ExtraServerMounts...)
	if plan.Modelcar != nil {
		// The model server reaches the modelcar's files through /proc: the
		// pod shares one process namespace, and both run as the same user.
		c.Pod.ShareProcessNamespace = ptr.To(true)
		if plan.ServerRunAsUser != nil && (server.SecurityContext == nil || server.SecurityContext.RunAsUser == nil) {
			if server.SecurityContext == nil {
				server.SecurityContext = &corev1.SecurityContext{}
			}
			server.SecurityContext.RunAsUser = ptr.To(*plan.ServerRunAsUser)
		}
		// Appended last: server points into the slice.
		c.Pod.InitContainers = append(c.Pod.InitContainers, *plan.ModelcarInit)
		c.Pod.Containers = append(c.Pod.Containers, *plan.Modelcar)
	}
	return nil
}

func credentialsFor(c *Component, isvc *v1beta1.InferenceService, in Inputs) storage.Credentials {
	model := isvc.Spec.Predictor.Model
	creds := storage.Credentials{StorageConfigSecret: isvc.Annotations[v1beta1.StorageSecretNameAnnotation]}
	if s := model.Storage; s != nil {
		creds.StorageSpec = model.StorageURI == nil
		if s.StorageKey != nil {
			creds.StorageKey = *s.StorageKey
		}
		if s.Parameters != nil {
			creds.Parameters = *s.Parameters
		}
	}
	creds.ServiceAccountSecrets = in.ServiceAccountSecrets[serviceAccountOf(c)]
	return creds
}

// serviceAccountOf is the component's ServiceAccount, "default" when unset.
func serviceAccountOf(c *Component) string {
	if c.Pod.ServiceAccountName != "" {
		return c.Pod.ServiceAccountName
	}
	return "default"
}
