package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCABundle(t *testing.T) {
	loc, err := Parse("s3://bucket/model")
	require.NoError(t, err)
	s3Secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Annotations: map[string]string{
		S3CABundleConfigMapAnnotation: "minio-ca", S3CABundleAnnotation: "/etc/minio/certs/ca.crt"}},
		Data: map[string][]byte{"AWS_ACCESS_KEY_ID": nil, "AWS_SECRET_ACCESS_KEY": nil}}
	tests := []struct {
		name                  string
		bundle                CABundle
		secrets               []corev1.Secret
		wantConfigMap, wantAt string
	}{
		{name: "none configured"},
		{name: "configured", bundle: CABundle{ConfigMap: GlobalCABundleConfigMap}, wantConfigMap: GlobalCABundleConfigMap, wantAt: DefaultCABundleMountPath},
		{name: "configured, its own path", bundle: CABundle{ConfigMap: GlobalCABundleConfigMap, MountPath: "/certs"}, wantConfigMap: GlobalCABundleConfigMap, wantAt: "/certs"},
		{name: "the S3 credentials' own bundle wins", bundle: CABundle{ConfigMap: GlobalCABundleConfigMap},
			secrets: []corev1.Secret{s3Secret}, wantConfigMap: "minio-ca", wantAt: "/etc/minio/certs"},
		{name: "the S3 credentials' bundle alone", secrets: []corev1.Secret{s3Secret}, wantConfigMap: "minio-ca", wantAt: "/etc/minio/certs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := MakePlan(loc, Initializer{Image: "init:1", CABundle: tt.bundle}, Credentials{ServiceAccountSecrets: tt.secrets})
			c := plan.InitContainer
			var vol *corev1.Volume
			for i := range plan.Volumes {
				if plan.Volumes[i].Name == caBundleVolume {
					vol = &plan.Volumes[i]
				}
			}
			if tt.wantConfigMap == "" {
				assert.Nil(t, vol)
				assert.Empty(t, envValue(c.Env, caBundleConfigMapEnv))
				return
			}
			require.NotNil(t, vol)
			assert.Equal(t, tt.wantConfigMap, vol.ConfigMap.Name)
			assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: caBundleVolume, MountPath: tt.wantAt, ReadOnly: true})
			assert.Equal(t, tt.wantConfigMap, envValue(c.Env, caBundleConfigMapEnv))
			assert.Equal(t, tt.wantAt, envValue(c.Env, caBundleMountPathEnv))
		})
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
