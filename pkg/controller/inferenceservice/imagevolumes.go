package inferenceservice

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/storage"
)

// ImageVolumes answers whether the cluster mounts images as volumes (KEP
// 4639), for OCI models in the native mode. The API server's version
// decides, except where the ImageVolume feature gate may be on or off
// (1.31 to 1.35): there a server-side dry run of a Deployment with an image
// volume says whether the API server keeps it. The answer is remembered: a
// yes for good, a no for a few minutes.
type ImageVolumes struct {
	// Version returns the API server's version ("v1.37.2").
	Version func() (string, error)
	// DryRun creates an object with dryRun=All.
	DryRun client.Writer

	mu      sync.Mutex
	known   *components.ImageVolumes
	checked time.Time
}

// imageVolumesRecheck is how long a "no" stands before the cluster is asked
// again (a feature gate turned on, an upgrade).
const imageVolumesRecheck = 5 * time.Minute

// Support returns whether image volumes can be used in namespace.
func (v *ImageVolumes) Support(ctx context.Context, namespace string) (components.ImageVolumes, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.known != nil && (v.known.Supported || time.Since(v.checked) < imageVolumesRecheck) {
		return *v.known, nil
	}
	raw, err := v.Version()
	if err != nil {
		return components.ImageVolumes{}, fmt.Errorf("read the API server's version: %w", err)
	}
	answer, probe := imageVolumesByVersion(raw)
	if probe {
		if answer, err = v.probe(ctx, namespace, raw); err != nil {
			return components.ImageVolumes{}, err
		}
	}
	v.known, v.checked = &answer, time.Now()
	return answer, nil
}

// imageVolumesByVersion decides by version alone where it can: image
// volumes are alpha in 1.31, beta off by default in 1.33, on by default in
// 1.35, GA and always on from 1.36. probe is true where the feature gate
// decides.
func imageVolumesByVersion(raw string) (answer components.ImageVolumes, probe bool) {
	v, err := utilversion.ParseGeneric(raw)
	switch {
	case err != nil:
		return components.ImageVolumes{}, true
	case v.AtLeast(utilversion.MajorMinor(1, 36)):
		return components.ImageVolumes{Supported: true}, false
	case v.AtLeast(utilversion.MajorMinor(1, 31)):
		return components.ImageVolumes{}, true
	}
	return components.ImageVolumes{Why: fmt.Sprintf("Kubernetes %s has no image volumes (they came in 1.31, behind the ImageVolume feature gate, GA in 1.36)", raw)}, false
}

// probe asks the API server, with a dry run, whether it keeps an image
// volume in a Deployment: with the feature gate off it drops the field.
func (v *ImageVolumes) probe(ctx context.Context, namespace, raw string) (components.ImageVolumes, error) {
	labels := map[string]string{"app": "serval-image-volume-probe"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "serval-image-volume-probe", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "probe", Image: "probe", VolumeMounts: []corev1.VolumeMount{{Name: "model", MountPath: storage.MountPath}}}},
				Volumes:    []corev1.Volume{{Name: "model", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "probe"}}}},
			}},
		},
	}
	err := v.DryRun.Create(ctx, dep, client.DryRunAll)
	switch {
	case err == nil && len(dep.Spec.Template.Spec.Volumes) == 1 && dep.Spec.Template.Spec.Volumes[0].Image != nil:
		return components.ImageVolumes{Supported: true}, nil
	case err == nil, isDroppedVolume(err):
		return components.ImageVolumes{Why: fmt.Sprintf("the ImageVolume feature gate is off on the API server (Kubernetes %s); turn it on, on the API server and the kubelets", raw)}, nil
	}
	return components.ImageVolumes{}, fmt.Errorf("check image volumes with a dry run: %w", err)
}

// isDroppedVolume reports a dry run refused because the API server dropped
// the image source, leaving a volume of no type.
func isDroppedVolume(err error) bool {
	return strings.Contains(err.Error(), "must specify a volume type")
}

// usesNativeOCI reports whether the InferenceService's model is an OCI image
// to mount as an image volume, so that the cluster must be asked.
func usesNativeOCI(isvc *v1beta1.InferenceService, init storage.Initializer) bool {
	loc, err := storage.Parse(components.StorageURIOf(isvc))
	return err == nil && loc.Kind == storage.OCI && init.ModeOf(loc) == storage.OCINative
}
