package storage

import (
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// The CA bundle's names, as KServe's storage initializer reads them.
const (
	// GlobalCABundleConfigMap is the ConfigMap each namespace gets, a copy of
	// the one serval-config names, for the storage initializer to trust.
	GlobalCABundleConfigMap = "global-ca-bundle"
	// CABundleFile is the key of the bundle in that ConfigMap.
	CABundleFile = "cabundle.crt"
	// DefaultCABundleMountPath is where the bundle is mounted by default.
	DefaultCABundleMountPath = "/etc/ssl/custom-certs"
	// caBundleVolume is the volume of the bundle.
	caBundleVolume = "cabundle-cert"
	// The env KServe's initializer reads: the ConfigMap's name and where it
	// is mounted; and the S3 credentials' own bundle (a Secret's
	// s3-cabundle-configmap and s3-cabundle annotations).
	caBundleConfigMapEnv    = "CA_BUNDLE_CONFIGMAP_NAME"
	caBundleMountPathEnv    = "CA_BUNDLE_VOLUME_MOUNT_POINT"
	awsCABundleConfigMapEnv = "AWS_CA_BUNDLE_CONFIGMAP"
	awsCABundleEnv          = "AWS_CA_BUNDLE"
)

// CABundle is the CA bundle the storage initializer trusts, so that a
// private endpoint with its own CA (an S3 store, say) can be reached.
type CABundle struct {
	// ConfigMap is the bundle's ConfigMap in the pod's namespace; "" for
	// none (unless the S3 credentials name one).
	ConfigMap string
	// MountPath is where it is mounted; DefaultCABundleMountPath when "".
	MountPath string
}

// addCABundle mounts the CA bundle into the initializer, as KServe does:
// the configured ConfigMap, or the one the S3 credentials name
// (AWS_CA_BUNDLE_CONFIGMAP), at the configured path, or the directory of
// the credentials' AWS_CA_BUNDLE; and tells the initializer both by env.
// Nothing when neither names a bundle.
func addCABundle(c *corev1.Container, volumes []corev1.Volume, b CABundle) []corev1.Volume {
	name, path := b.ConfigMap, b.MountPath
	if path == "" {
		path = DefaultCABundleMountPath
	}
	for _, e := range c.Env {
		switch {
		case e.Name == awsCABundleConfigMapEnv && e.Value != "":
			name = e.Value
		case e.Name == awsCABundleEnv && e.Value != "":
			path = filepath.Dir(e.Value)
		}
	}
	if name == "" {
		return volumes
	}
	for _, e := range []corev1.EnvVar{{Name: caBundleConfigMapEnv, Value: name}, {Name: caBundleMountPathEnv, Value: path}} {
		if !slices.ContainsFunc(c.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name }) {
			c.Env = append(c.Env, e)
		}
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: caBundleVolume, MountPath: path, ReadOnly: true})
	return append(volumes, corev1.Volume{Name: caBundleVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
}
