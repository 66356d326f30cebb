package storage

import (
	corev1 "k8s.io/api/core/v1"
)

// Secret keys and annotations recognised on ServiceAccount Secrets, as in
// KServe (with Serval's annotation prefix).
const (
	s3AccessKeyIDKey     = "AWS_ACCESS_KEY_ID"
	s3SecretAccessKeyKey = "AWS_SECRET_ACCESS_KEY"
	gcsCredentialsKey    = "gcloud-application-credentials.json"
	hfTokenKey           = "HF_TOKEN"
	gcsMountPath         = "/var/secrets/"

	// S3 settings read from a Secret's annotations.
	S3EndpointAnnotation  = "serving.serval.dev/s3-endpoint"
	S3UseHTTPSAnnotation  = "serving.serval.dev/s3-usehttps"
	S3RegionAnnotation    = "serving.serval.dev/s3-region"
	S3VerifySSLAnnotation = "serving.serval.dev/s3-verifyssl"
	// S3CABundleConfigMapAnnotation names a ConfigMap with the endpoint's
	// CA bundle (cabundle.crt), mounted into the initializer; and
	// S3CABundleAnnotation the bundle's path there (KServe's annotations).
	S3CABundleConfigMapAnnotation = "serving.serval.dev/s3-cabundle-configmap"
	S3CABundleAnnotation          = "serving.serval.dev/s3-cabundle"
	// S3UseAnonymousCredentialAnnotation, S3UseVirtualBucketAnnotation and
	// S3UseAccelerateAnnotation are KServe's other S3 settings.
	S3UseAnonymousCredentialAnnotation = "serving.serval.dev/s3-useanoncredential"
	S3UseVirtualBucketAnnotation       = "serving.serval.dev/s3-usevirtualbucket"
	S3UseAccelerateAnnotation          = "serving.serval.dev/s3-useaccelerate"
)

// credentialsFor returns the initializer's env vars, and the volumes and mounts
// for file credentials. Values are referenced from Secrets, never copied.
func credentialsFor(c Credentials) ([]corev1.EnvVar, []corev1.Volume, []corev1.VolumeMount) {
	var env []corev1.EnvVar
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	if c.StorageConfigSecret != "" || c.StorageKey != "" || c.StorageSpec {
		name, key := c.StorageConfigSecret, StorageSpecKey(c.StorageKey, c.Parameters)
		if name == "" {
			name = DefaultStorageConfigSecret
		}
		env = append(env, secretEnv("STORAGE_CONFIG", name, key))
		if len(c.Parameters) > 0 {
			env = append(env, corev1.EnvVar{Name: "STORAGE_OVERRIDE_CONFIG", Value: parametersJSON(c.Parameters)})
		}
	}
	for _, s := range c.ServiceAccountSecrets {
		switch {
		case has(s, s3AccessKeyIDKey) && has(s, s3SecretAccessKeyKey):
			env = append(env, secretEnv(s3AccessKeyIDKey, s.Name, s3AccessKeyIDKey),
				secretEnv(s3SecretAccessKeyKey, s.Name, s3SecretAccessKeyKey))
			env = append(env, s3Settings(s.Annotations)...)
		case has(s, gcsCredentialsKey):
			volume := "gcs-" + s.Name
			volumes = append(volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: s.Name},
			}})
			mounts = append(mounts, corev1.VolumeMount{Name: volume, MountPath: gcsMountPath, ReadOnly: true})
			env = append(env, corev1.EnvVar{Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: gcsMountPath + gcsCredentialsKey})
		case has(s, hfTokenKey):
			env = append(env, secretEnv(hfTokenKey, s.Name, hfTokenKey))
		}
	}
	return env, volumes, mounts
}

func has(s corev1.Secret, key string) bool {
	_, inData := s.Data[key]
	_, inString := s.StringData[key]
	return inData || inString
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

func s3Settings(annotations map[string]string) []corev1.EnvVar {
	var env []corev1.EnvVar
	if endpoint := annotations[S3EndpointAnnotation]; endpoint != "" {
		scheme := "https://"
		if annotations[S3UseHTTPSAnnotation] == "0" {
			scheme = "http://"
		}
		env = append(env, corev1.EnvVar{Name: "S3_ENDPOINT", Value: endpoint},
			corev1.EnvVar{Name: "AWS_ENDPOINT_URL", Value: scheme + endpoint})
	}
	// A fixed order: the env list is part of the pod template, and any change
	// of order would roll the Deployment.
	for _, setting := range []struct{ annotation, env string }{
		{S3UseHTTPSAnnotation, "S3_USE_HTTPS"}, {S3VerifySSLAnnotation, "S3_VERIFY_SSL"},
	} {
		if v := annotations[setting.annotation]; v != "" {
			env = append(env, corev1.EnvVar{Name: setting.env, Value: v})
		}
	}
	if region := annotations[S3RegionAnnotation]; region != "" {
		env = append(env, corev1.EnvVar{Name: "AWS_REGION", Value: region})
	}
	for _, setting := range []struct{ annotation, env string }{
		{S3UseVirtualBucketAnnotation, "S3_USER_VIRTUAL_BUCKET"}, {S3UseAccelerateAnnotation, "S3_USE_ACCELERATE"},
		{S3UseAnonymousCredentialAnnotation, "awsAnonymousCredential"},
		{S3CABundleAnnotation, awsCABundleEnv}, {S3CABundleConfigMapAnnotation, awsCABundleConfigMapEnv},
	} {
		if v := annotations[setting.annotation]; v != "" {
			env = append(env, corev1.EnvVar{Name: setting.env, Value: v})
		}
	}
	return env
}
