package llmobjects

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

func kvTierVolume(i int) string { return fmt.Sprintf("kv-cache-secondary-%d", i) }

// addKVCacheOffloading passes --kv-transfer-config to vLLM (unless the
// container sets it, as a preset of KServe's does in its script) and mounts
// each secondary tier's volume into the main container: an emptyDir of the
// tier's size (also requested as ephemeral storage, so the scheduler
// counts it), an ephemeral claim per pod, or the user's claim at its path.
func addKVCacheOffloading(pod *corev1.PodSpec, kv *v1alpha2.KVCacheOffloadingSpec) {
	if kv == nil {
		return
	}
	main := &pod.Containers[0]
	if !hasArg(main, "--kv-transfer-config") && !hasArg(main, "--kv_transfer_config") &&
		!strings.Contains(strings.Join(main.Command, " "), "kv-transfer-config") {
		main.Args = append(main.Args, "--kv-transfer-config", kv.TransferConfig())
	}
	for i, s := range kv.Secondary {
		fs := s.FileSystem
		if fs == nil {
			continue
		}
		mount := corev1.VolumeMount{Name: kvTierVolume(i), MountPath: v1alpha2.KVTierPath(i)}
		var src corev1.VolumeSource
		switch {
		case fs.EmptyDir != nil:
			size := fs.EmptyDir.Size.DeepCopy()
			src.EmptyDir = &corev1.EmptyDirVolumeSource{SizeLimit: &size}
			if main.Resources.Requests == nil {
				main.Resources.Requests = corev1.ResourceList{}
			}
			total := main.Resources.Requests[corev1.ResourceEphemeralStorage]
			total.Add(fs.EmptyDir.Size)
			main.Resources.Requests[corev1.ResourceEphemeralStorage] = total
		case fs.PVC != nil && fs.PVC.Spec != nil:
			src.Ephemeral = &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: *fs.PVC.Spec.DeepCopy()}}
		case fs.PVC != nil && fs.PVC.Ref != nil:
			src.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fs.PVC.Ref.Name}
			mount.SubPath = fs.PVC.Ref.Path
		default:
			continue
		}
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: kvTierVolume(i), VolumeSource: src})
		main.VolumeMounts = append(main.VolumeMounts, mount)
	}
}
