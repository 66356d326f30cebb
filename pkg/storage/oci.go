package storage

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Modelcar configures OCI model images (serval-config keys with KServe's
// names under storageInitializer.).
type Modelcar struct {
	// Enabled: oci:// runs the image as a modelcar (enableModelcar);
	// otherwise the storage initializer fetches it.
	Enabled bool
	// Mode is what oci:// means when modelcars are enabled: OCIModelcar or
	// OCINative (ociModelMode).
	Mode string
	// Resources of the modelcar sidecar (cpuModelcar, memoryModelcar:
	// requests and limits).
	Resources corev1.ResourceRequirements
	// UID runs the modelcar and the model server as the same user
	// (uidModelcar), so that the server may read the modelcar's files
	// through /proc; nil leaves the images' users.
	UID *int64
}

// modeOf is how an OCI location gets into the pod: what its scheme asks
// for, else the configured mode.
func (m Modelcar) modeOf(loc Location) string {
	switch {
	case loc.OCIMode != "":
		return loc.OCIMode
	case !m.Enabled:
		return OCIFetch
	case m.Mode != "":
		return m.Mode
	}
	return OCIModelcar
}

// ModeOf is how an OCI location gets into the pod with this configuration.
func (i Initializer) ModeOf(loc Location) string { return i.Modelcar.modeOf(loc) }

// The modelcar's names, as KServe's.
const (
	ModelcarContainerName     = "modelcar"
	ModelcarInitContainerName = "modelcar-init"
	// modelcarMount is where the shared volume is mounted in the model
	// server and the modelcar: the modelcar links {mount}/models to its own
	// /models, seen through /proc.
	modelcarMount = "/mnt"
)

// modelcarPlan runs the model image as a sidecar, as KServe's modelcar: it
// links /mnt/models to /proc/{its pid}/root/models in a volume it shares
// with the model server, and sleeps. An init container of the same image
// runs first, so the image is pulled before the model server starts.
func modelcarPlan(image string, m Modelcar) Plan {
	security := &corev1.SecurityContext{RunAsUser: m.UID}
	if m.UID == nil {
		security = nil
	}
	sidecar := &corev1.Container{
		Name:  ModelcarContainerName,
		Image: image,
		// $$ is the shell's pid; $$$$ in a pod spec, since Kubernetes
		// expands $$ to $.
		Args:                     []string{"sh", "-c", "ln -sf /proc/$$$$/root/models " + MountPath + " && sleep infinity"},
		Resources:                *m.Resources.DeepCopy(),
		VolumeMounts:             []corev1.VolumeMount{{Name: VolumeName, MountPath: modelcarMount}},
		SecurityContext:          security,
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	init := &corev1.Container{
		Name:                     ModelcarInitContainerName,
		Image:                    image,
		Args:                     []string{"sh", "-c", fmt.Sprintf("echo 'Pre-fetching modelcar %s: ' && echo OK", image)},
		Resources:                *m.Resources.DeepCopy(),
		SecurityContext:          security.DeepCopy(),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	return Plan{
		Volumes:     []corev1.Volume{{Name: VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		ServerMount: corev1.VolumeMount{Name: VolumeName, MountPath: modelcarMount, ReadOnly: true},
		Modelcar:    sidecar, ModelcarInit: init, ServerRunAsUser: m.UID,
	}
}

// imageVolumePlan mounts the model image as a Kubernetes image volume.
func imageVolumePlan(image string) Plan {
	return Plan{
		Volumes: []corev1.Volume{{Name: VolumeName, VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: image, PullPolicy: corev1.PullIfNotPresent},
		}}},
		ServerMount: corev1.VolumeMount{Name: VolumeName, MountPath: MountPath, ReadOnly: true},
	}
}
