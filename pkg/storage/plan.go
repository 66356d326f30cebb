package storage

import (
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Names shared with KServe's runtimes and storage initializer.
const (
	// MountPath is where the model server finds the model.
	MountPath = "/mnt/models"
	// VolumeName is the volume holding the model.
	VolumeName = "kserve-provision-location"
	// InitContainerName is the downloading init container.
	InitContainerName = "storage-initializer"
	// DefaultStorageConfigSecret is the Secret read with storage.key when the
	// storage-secret annotation names none.
	DefaultStorageConfigSecret = "storage-config"
	// defaultStorageKey is the storage-config key used when only the secret
	// name is given.
	defaultStorageKey = "default"
)

// Initializer is the configured storage-initializer container, and how OCI
// model images are handled.
type Initializer struct {
	Image     string
	Resources corev1.ResourceRequirements
	// Modelcar configures OCI model images.
	Modelcar Modelcar
	// CABundle is the CA bundle the initializer trusts.
	CABundle CABundle
}

// Credentials are the inputs for the initializer's credentials.
type Credentials struct {
	// StorageConfigSecret names the storage-config Secret (annotation
	// serving.serval.dev/storageSecretName); empty for none.
	StorageConfigSecret string
	// StorageKey is storage.key, the key of that Secret.
	StorageKey string
	// Parameters are storage.parameters, overriding the key's values.
	Parameters map[string]string
	// StorageSpec is true for a model given as storage: {key, path}: its
	// credentials are in the storage-config Secret even with no key given.
	StorageSpec bool
	// ServiceAccountSecrets are the Secrets attached to the component's
	// ServiceAccount, fetched by the caller.
	ServiceAccountSecrets []corev1.Secret
}

// Plan is what the pod needs for the model.
type Plan struct {
	// InitContainer downloads the model; nil for pvc:// and for OCI
	// images as modelcars or image volumes.
	InitContainer *corev1.Container
	// Volumes are added to the pod.
	Volumes []corev1.Volume
	// ServerMount mounts the model into the model server, read-only.
	ServerMount corev1.VolumeMount
	// ExtraServerMounts are further mounts of the model server (storageUris
	// on claims).
	ExtraServerMounts []corev1.VolumeMount
	// Modelcar is the OCI modelcar sidecar, and ModelcarInit the init
	// container that pulls its image before the model server starts; both
	// nil unless the model is a modelcar. The pod then shares its process
	// namespace, and ServerRunAsUser is the model server's user.
	Modelcar, ModelcarInit *corev1.Container
	ServerRunAsUser        *int64
}

// MakePlan returns the pod changes for a parsed location.
func MakePlan(loc Location, init Initializer, creds Credentials) Plan {
	if loc.Kind == OCI {
		switch init.Modelcar.modeOf(loc) {
		case OCIModelcar:
			return modelcarPlan(loc.Image, init.Modelcar)
		case OCINative:
			return imageVolumePlan(loc.Image)
		}
		// Fetched: the storage initializer copies the image's files.
		loc = Location{URI: "oci://" + loc.Image, Scheme: "oci", Kind: Download}
	}
	if loc.Kind == PVC {
		return Plan{
			Volumes: []corev1.Volume{{Name: VolumeName, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: loc.Claim, ReadOnly: true},
			}}},
			ServerMount: corev1.VolumeMount{Name: VolumeName, MountPath: MountPath, SubPath: loc.SubPath, ReadOnly: true},
		}
	}
	env, volumes, mounts := credentialsFor(creds)
	container := &corev1.Container{
		Name:                     InitContainerName,
		Image:                    init.Image,
		Args:                     []string{loc.URI, MountPath},
		Resources:                *init.Resources.DeepCopy(),
		Env:                      env,
		VolumeMounts:             append([]corev1.VolumeMount{{Name: VolumeName, MountPath: MountPath}}, mounts...),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	volumes = addCABundle(container, volumes, init.CABundle)
	return Plan{
		InitContainer: container,
		Volumes:       append([]corev1.Volume{{Name: VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}, volumes...),
		ServerMount:   corev1.VolumeMount{Name: VolumeName, MountPath: MountPath, ReadOnly: true},
	}
}

// parametersJSON encodes storage parameters with sorted keys, so the pod
// template, and so the rollout, does not change from one reconcile to the next.
func parametersJSON(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ordered := make(map[string]string, len(p))
	for _, k := range keys {
		ordered[k] = p[k]
	}
	data, _ := json.Marshal(ordered) // a map of strings always encodes
	return string(data)
}
