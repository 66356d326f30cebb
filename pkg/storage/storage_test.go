package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParse(t *testing.T) {
	tests := []struct {
		uri     string
		want    Location
		wantErr string
	}{
		{uri: "gs://bucket/model", want: Location{URI: "gs://bucket/model", Scheme: "gs", Kind: Download}},
		{uri: "s3://bucket/a/b", want: Location{URI: "s3://bucket/a/b", Scheme: "s3", Kind: Download}},
		{uri: "https://host/model.joblib", want: Location{URI: "https://host/model.joblib", Scheme: "https", Kind: Download}},
		{uri: "hf://org/model", want: Location{URI: "hf://org/model", Scheme: "hf", Kind: Download}},
		{uri: "pvc://claim/dir/model", want: Location{URI: "pvc://claim/dir/model", Scheme: "pvc", Kind: PVC, Claim: "claim", SubPath: "dir/model"}},
		{uri: "pvc://claim", want: Location{URI: "pvc://claim", Scheme: "pvc", Kind: PVC, Claim: "claim"}},
		{uri: "ftp://host/model", wantErr: `storageUri scheme "ftp" is not supported; use gs://, s3://, http(s)://, hf:// or pvc://`},
		{uri: "/local/model", wantErr: `storageUri "/local/model" has no scheme`},
		{uri: "s3:///model", wantErr: `storageUri "s3:///model" names no bucket, host or repository after s3://`},
		{uri: "pvc:///path", wantErr: `storageUri "pvc:///path" names no claim; use pvc://{claim}/{path}`},
		{uri: "http://ho st/x", wantErr: `is not a valid URL`},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := Parse(tt.uri)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCredentials(t *testing.T) {
	s3 := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3creds", Annotations: map[string]string{
		S3EndpointAnnotation: "minio:9000", S3UseHTTPSAnnotation: "0", S3RegionAnnotation: "eu-west-1",
	}}, Data: map[string][]byte{s3AccessKeyIDKey: nil, s3SecretAccessKeyKey: nil}}
	gcs := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gcp"}, Data: map[string][]byte{gcsCredentialsKey: nil}}
	unrelated := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string][]byte{"token": nil}}

	env, volumes, mounts := credentialsFor(Credentials{StorageKey: "minio", Parameters: map[string]string{"bucket": "b", "type": "s3"},
		ServiceAccountSecrets: []corev1.Secret{s3, gcs, unrelated}})
	names := make([]string, len(env))
	for i, e := range env {
		names[i] = e.Name
	}
	assert.Equal(t, []string{"STORAGE_CONFIG", "STORAGE_OVERRIDE_CONFIG", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"S3_ENDPOINT", "AWS_ENDPOINT_URL", "S3_USE_HTTPS", "AWS_REGION", "GOOGLE_APPLICATION_CREDENTIALS"}, names)
	assert.Equal(t, "storage-config", env[0].ValueFrom.SecretKeyRef.Name)
	assert.Equal(t, "minio", env[0].ValueFrom.SecretKeyRef.Key)
	assert.Equal(t, `{"bucket":"b","type":"s3"}`, env[1].Value)
	assert.Equal(t, "http://minio:9000", env[5].Value)
	require.Len(t, volumes, 1)
	assert.Equal(t, "gcp", volumes[0].Secret.SecretName)
	require.Len(t, mounts, 1)
	assert.True(t, mounts[0].ReadOnly)
}

func TestPlanIsDeterministic(t *testing.T) {
	loc, err := Parse("s3://bucket/model")
	require.NoError(t, err)
	creds := Credentials{StorageConfigSecret: "mine", Parameters: map[string]string{"z": "1", "a": "2", "m": "3"}}
	first := MakePlan(loc, Initializer{Image: "init:1"}, creds)
	for range 20 {
		assert.Equal(t, first, MakePlan(loc, Initializer{Image: "init:1"}, creds))
	}
	assert.Equal(t, "default", first.InitContainer.Env[0].ValueFrom.SecretKeyRef.Key, "the secret name alone reads the default key")
}

func TestURIFromStorageSpec(t *testing.T) {
	data := map[string][]byte{
		"default":    []byte(`{"type": "s3", "bucket": "models", "access_key_id": "x"}`),
		"default_gs": []byte(`{"type": "gs", "bucket": "gcs-models"}`),
		"minio":      []byte(`{"type": "s3", "bucket": "team", "endpoint_url": "http://minio:9000"}`),
		"no-type":    []byte(`{"bucket": "b"}`),
		"azure":      []byte(`{"type": "azure", "bucket": "b"}`),
		"broken":     []byte(`not json`),
	}
	tests := []struct {
		name, key, path string
		params          map[string]string
		want, wantErr   string
	}{
		{"the default key", "", "sklearn/model", nil, "s3://models/sklearn/model", ""},
		{"a named key", "minio", "/iris", nil, "s3://team/iris", ""},
		{"the default key of a type", "", "m", map[string]string{"type": "gs"}, "gs://gcs-models/m", ""},
		{"parameters override the bucket", "minio", "m", map[string]string{"bucket": "other"}, "s3://other/m", ""},
		{"a missing key", "nope", "m", nil, "", `the storage-config Secret storage-config has no key "nope"`},
		{"no type", "no-type", "m", nil, "", `key "no-type" of Secret storage-config names no type`},
		{"an unsupported type", "azure", "m", nil, "", `storage type "azure" (key "azure" of Secret storage-config) is not supported by Serval`},
		{"not JSON", "broken", "m", nil, "", `key "broken" of Secret storage-config is not a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := URIFromStorageSpec("storage-config", data, StorageSpecKey(tt.key, tt.params), tt.path, tt.params)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
