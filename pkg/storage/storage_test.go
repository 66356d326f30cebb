package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// digest is a well-formed sha256 digest.
const digest = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"

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
		{uri: "ftp://host/model", wantErr: `storageUri scheme "ftp" is not supported; use gs://, s3://, http(s)://, hf://, pvc:// or oci:// (oci+native://, oci+fetch://)`},
		{uri: "/local/model", wantErr: `storageUri "/local/model" has no scheme`},
		{uri: "s3:///model", wantErr: `storageUri "s3:///model" names no bucket, host or repository after s3://`},
		{uri: "pvc:///path", wantErr: `storageUri "pvc:///path" names no claim; use pvc://{claim}/{path}`},
		{uri: "http://ho st/x", wantErr: `is not a valid URL`},
		{uri: "oci://registry.example.com/models/iris:1.0", want: Location{URI: "oci://registry.example.com/models/iris:1.0", Scheme: "oci", Kind: OCI,
			Image: "registry.example.com/models/iris:1.0"}},
		{uri: "oci+native://quay.io/m@sha256:" + digest, want: Location{URI: "oci+native://quay.io/m@sha256:" + digest, Scheme: "oci+native", Kind: OCI,
			Image: "quay.io/m@sha256:" + digest, OCIMode: OCINative}},
		{uri: "OCI+FETCH://quay.io/m", want: Location{URI: "OCI+FETCH://quay.io/m", Scheme: "oci+fetch", Kind: OCI, Image: "quay.io/m", OCIMode: OCIFetch}},
		{uri: "oci://", wantErr: `storageUri "oci://" does not name an image (no image is named); use oci://{registry}/{repository}:{tag} or @{digest}`},
		{uri: "oci://quay.io/m:", wantErr: `does not name an image`},
		{uri: "oci://quay.io//m", wantErr: `does not name an image`},
		{uri: "oci://quay.io/Models/Iris:1", wantErr: `does not name an image (invalid reference format: repository name (Models/Iris) must be lowercase)`},
		{uri: "oci://quay.io/m@sha256:abc", wantErr: `does not name an image`},
		{uri: "oci://quay.io/m:a tag", wantErr: `does not name an image`},
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

func TestOCIModes(t *testing.T) {
	tests := []struct {
		name string
		uri  string
		m    Modelcar
		want string
	}{
		{"oci:// with modelcars on", "oci://r/m:1", Modelcar{Enabled: true, Mode: OCIModelcar}, OCIModelcar},
		{"oci:// with ociModelMode native", "oci://r/m:1", Modelcar{Enabled: true, Mode: OCINative}, OCINative},
		{"oci:// with modelcars off", "oci://r/m:1", Modelcar{Enabled: false, Mode: OCIModelcar}, OCIFetch},
		{"oci+native:// whatever the config", "oci+native://r/m:1", Modelcar{}, OCINative},
		{"oci+fetch:// whatever the config", "oci+fetch://r/m:1", Modelcar{Enabled: true, Mode: OCIModelcar}, OCIFetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.uri)
			require.NoError(t, err)
			assert.Equal(t, tt.want, Initializer{Modelcar: tt.m}.ModeOf(loc))
		})
	}
}

func TestCheckMountPaths(t *testing.T) {
	download := func(paths ...string) []Entry {
		out := make([]Entry, len(paths))
		for i, p := range paths {
			out[i] = Entry{Location: Location{Kind: Download}, MountPath: p}
		}
		return out
	}
	claim := func(p string) Entry { return Entry{Location: Location{Kind: PVC, Claim: "c"}, MountPath: p} }
	tests := []struct {
		name    string
		entries []Entry
		want    []string
	}{
		{"two directories", download("/mnt/models/a", "/mnt/models/b"), nil},
		{"relative", download("models/a"), []string{`[0].mountPath: "models/a" is not an absolute path`}},
		{"root", download("/"), []string{"[0].mountPath: a model cannot be mounted at /"}},
		{"dot-dot", download("/mnt/models/../etc"), []string{`[0].mountPath: "/mnt/models/../etc" holds "..", which a mount path may not`}},
		{"downloads nest, as in KServe", download("/mnt/models", "/mnt/models/b"), nil},
		{"downloads share a path, as in KServe (both unset)", download("/mnt/models", "/mnt/models"), nil},
		{"a claim inside a download", []Entry{download("/mnt/models")[0], claim("/mnt/models/extra")}, nil},
		{"two claims at one path", []Entry{claim("/mnt/a/"), claim("/mnt/a")},
			[]string{`[1].mountPath: "/mnt/a" is where the claim of [0] is mounted too; each claim needs a path of its own`}},
		{"prefixes that are not parents", download("/mnt/ab", "/mnt/a"), nil},
		{"a system directory", download("/etc"), []string{`[0].mountPath: "/etc" would hide the container's own /etc; mount models in a directory of their own, such as /mnt/models/{name}`}},
		{"under a system directory", download("/mnt/models/a", "/usr/share/models"),
			[]string{`[1].mountPath: "/usr/share/models" would hide the container's own /usr; mount models in a directory of their own, such as /mnt/models/{name}`}},
		{"a trailing slash", download("/lib64/"), []string{`[0].mountPath: "/lib64/" would hide the container's own /lib64; mount models in a directory of their own, such as /mnt/models/{name}`}},
		{"the kubelet's mounts", download("/var/run/secrets/x"),
			[]string{`[0].mountPath: "/var/run/secrets/x" would hide the container's own /var/run; mount models in a directory of their own, such as /mnt/models/{name}`}},
		{"every system directory", download("/proc", "/sys", "/dev/shm", "/bin", "/sbin", "/lib"), []string{
			`[0].mountPath: "/proc" would hide the container's own /proc; mount models in a directory of their own, such as /mnt/models/{name}`,
			`[1].mountPath: "/sys" would hide the container's own /sys; mount models in a directory of their own, such as /mnt/models/{name}`,
			`[2].mountPath: "/dev/shm" would hide the container's own /dev; mount models in a directory of their own, such as /mnt/models/{name}`,
			`[3].mountPath: "/bin" would hide the container's own /bin; mount models in a directory of their own, such as /mnt/models/{name}`,
			`[4].mountPath: "/sbin" would hide the container's own /sbin; mount models in a directory of their own, such as /mnt/models/{name}`,
			`[5].mountPath: "/lib" would hide the container's own /lib; mount models in a directory of their own, such as /mnt/models/{name}`,
		}},
		{"names that only start like system directories", download("/library/models", "/etcetera", "/var/runner"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, CheckMountPaths(tt.entries))
		})
	}
}

func TestCommonParent(t *testing.T) {
	assert.Equal(t, "/mnt/models/a", CommonParent([]string{"/mnt/models/a"}), "one model: its own path")
	assert.Equal(t, "/mnt/models", CommonParent([]string{"/mnt/models/a", "/mnt/models/b/c"}))
	assert.Equal(t, "/mnt", CommonParent([]string{"/mnt/ab", "/mnt/a"}))
	assert.Equal(t, "/", CommonParent([]string{"/models/a", "/data/b"}))
}

func TestMakeMultiPlanRefuses(t *testing.T) {
	loc := func(uri string) Location {
		l, err := Parse(uri)
		require.NoError(t, err)
		return l
	}
	_, err := MakeMultiPlan([]Entry{{loc("gs://b/a"), "/models/a"}, {loc("gs://b/b"), "/data/b"}}, Initializer{}, Credentials{})
	assert.EqualError(t, err, "the mount paths /models/a, /data/b share no parent directory but /; put them under one, such as /mnt/models")
	_, err = MakeMultiPlan([]Entry{{loc("oci://r/m:1"), "/mnt/models/a"}}, Initializer{}, Credentials{})
	assert.EqualError(t, err, "storageUris[0]: oci://r/m:1 is an OCI image; storageUris takes gs://, s3://, http(s)://, hf:// and pvc:// URIs (an OCI model goes in storageUri)")
	_, err = MakeMultiPlan([]Entry{{loc("pvc://a/m"), "/mnt/m"}, {loc("pvc://b/m"), "/mnt/m"}}, Initializer{}, Credentials{})
	assert.EqualError(t, err, `storageUris[1].mountPath: "/mnt/m" is where the claim of [0] is mounted too; each claim needs a path of its own`)
}

// TestMakeMultiPlanNestedDownloads: downloads that nest or share a path go
// into one volume at their common parent, each to its path, as KServe's
// storage initializer takes them.
func TestMakeMultiPlanNestedDownloads(t *testing.T) {
	loc := func(uri string) Location {
		l, err := Parse(uri)
		require.NoError(t, err)
		return l
	}
	plan, err := MakeMultiPlan([]Entry{{loc("gs://b/model"), "/mnt/models"}, {loc("hf://org/tokenizer"), "/mnt/models/tokenizer"}}, Initializer{Image: "init"}, Credentials{})
	require.NoError(t, err)
	assert.Equal(t, []string{"gs://b/model", "/mnt/models", "hf://org/tokenizer", "/mnt/models/tokenizer"}, plan.InitContainer.Args)
	assert.Equal(t, "/mnt", plan.ServerMount.MountPath, "the common parent")
}
