package storage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
)

func csc(name string, formats ...v1alpha1.SupportedURIFormat) v1alpha1.ClusterStorageContainer {
	return v1alpha1.ClusterStorageContainer{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.StorageContainerSpec{
		Container: corev1.Container{Name: "storage-initializer", Image: "example.com/" + name + ":1"}, SupportedURIFormats: formats}}
}

func prefix(p string) v1alpha1.SupportedURIFormat { return v1alpha1.SupportedURIFormat{Prefix: p} }
func regex(r string) v1alpha1.SupportedURIFormat  { return v1alpha1.SupportedURIFormat{Regex: r} }

func TestSelectContainer(t *testing.T) {
	disabled := csc("a-disabled", prefix("modelscope://"))
	disabled.Disabled = ptr.To(true)
	job := csc("b-job", prefix("modelscope://"))
	job.Spec.WorkloadType = v1alpha1.LocalModelDownloadJob
	all := []v1alpha1.ClusterStorageContainer{
		csc("z-https", regex(`https?://(.+)/(.+)`)), csc("m-modelscope", prefix("modelscope://")), disabled, job,
		csc("n-azure", regex(`https://(.+?).blob.core.windows.net/(.+)`)),
	}
	tests := []struct {
		name, uri, named string
		want             string // the container chosen; "" for none
		wantErr          string
	}{
		{name: "a prefix", uri: "modelscope://qwen/Qwen2", want: "m-modelscope"},
		{name: "the first in name order of those that match", uri: "https://acct.blob.core.windows.net/models/m", want: "n-azure"},
		{name: "a regex anywhere in the URI", uri: "http://example.com/model", want: "z-https"},
		{name: "none matches", uri: "gs://bucket/model"},
		{name: "named", uri: "https://example.com/m", named: "z-https", want: "z-https"},
		{name: "named, missing", uri: "modelscope://a/b", named: "nope", wantErr: `names the ClusterStorageContainer "nope", which does not exist`},
		{name: "named, disabled", uri: "modelscope://a/b", named: "a-disabled", wantErr: `the ClusterStorageContainer "a-disabled" is disabled`},
		{name: "named, a download job", uri: "modelscope://a/b", named: "b-job", wantErr: `has workloadType "localModelDownloadJob"`},
		{name: "named, not its URI", uri: "gs://b/m", named: "m-modelscope", wantErr: `does not support the storage URI "gs://b/m"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectContainer(tt.uri, tt.named, all)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Name)
		})
	}
	_, err := SelectContainer("x://y", "", []v1alpha1.ClusterStorageContainer{csc("broken", regex(`(`))})
	assert.ErrorContains(t, err, `ClusterStorageContainer broken: supportedUriFormats[0].regex "(" does not compile`)
}

func TestParseWith(t *testing.T) {
	_, err := ParseWith("modelscope://qwen/Qwen2", false)
	assert.ErrorContains(t, err, `storageUri scheme "modelscope" is not supported`)
	assert.ErrorContains(t, err, "or add a ClusterStorageContainer whose supportedUriFormats match it")
	loc, err := ParseWith("modelscope://qwen/Qwen2", true)
	require.NoError(t, err)
	assert.Equal(t, Location{URI: "modelscope://qwen/Qwen2", Scheme: "modelscope", Kind: Download}, loc)
	loc, err = ParseWith("pvc://claim/m", true)
	require.NoError(t, err)
	assert.Equal(t, PVC, loc.Kind, "a scheme Serval knows keeps its meaning")
}

// TestUseContainer: the storage container's fields are merged over the
// initializer as a strategic merge patch.
func TestUseContainer(t *testing.T) {
	loc, err := Parse("hf://org/model")
	require.NoError(t, err)
	plan := MakePlan(loc, Initializer{Image: "kserve/storage-initializer:v1"}, Credentials{StorageConfigSecret: "storage-config"})
	before := *plan.InitContainer.DeepCopy()
	require.NotEmpty(t, before.Env, "the credentials give the initializer env to keep")
	require.NoError(t, plan.UseContainer(corev1.Container{
		Name: "ignored", Image: "example.com/downloader:2",
		Env:       []corev1.EnvVar{{Name: "HF_HUB_ENABLE_HF_TRANSFER", Value: "1"}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
	}))
	c := plan.InitContainer
	assert.Equal(t, before.Name, c.Name, "the initializer keeps its name")
	assert.Equal(t, "example.com/downloader:2", c.Image)
	assert.Equal(t, before.Args, c.Args, "the URI and path stay")
	assert.Equal(t, before.VolumeMounts, c.VolumeMounts)
	assert.Equal(t, "1", envValue(c.Env, "HF_HUB_ENABLE_HF_TRANSFER"), "env merged by name")
	for _, e := range before.Env {
		assert.Contains(t, c.Env, e, "the credentials' env stays")
	}
	assert.Equal(t, resource.MustParse("4Gi"), c.Resources.Limits[corev1.ResourceMemory])

	claim, err := Parse("pvc://claim/m")
	require.NoError(t, err)
	mounted := MakePlan(claim, Initializer{}, Credentials{})
	require.NoError(t, mounted.UseContainer(corev1.Container{Image: "x"}))
	assert.Nil(t, mounted.InitContainer, "a claim is mounted, not downloaded")
}
