package v1beta1_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	sigsjson "sigs.k8s.io/json"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// item is an InferenceService as the API server returns it, with the given
// predictor.
func item(name, predictor string) string {
	return `{"apiVersion":"serving.serval.dev/v1beta1","kind":"InferenceService","metadata":{"name":"` + name +
		`","namespace":"ns","uid":"u-` + name + `"},"spec":{"predictor":` + predictor +
		`},"status":{"url":"http://` + name + `"}}`
}

// TestListWithUndecodableItems decodes a list as the API machinery does:
// every item arrives, the bad ones with DecodeError naming the field.
func TestListWithUndecodableItems(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(scheme))
	codecs := serializer.NewCodecFactory(scheme)
	good := `{"model":{"modelFormat":{"name":"sklearn"},"storageUri":"gs://b/m"}}`
	tests := []struct {
		name, predictor, want string
	}{
		{"quantity", `{"model":{"modelFormat":{"name":"sklearn"},"resources":{"requests":{"cpu":"lots"}}}}`,
			"spec.predictor.model.resources.requests.cpu: quantities must match the regular expression"},
		{"port-as-string", `{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"8080"}]}]}`,
			"spec.predictor.containers[0].ports[0].containerPort: must be a whole number, not a string"},
		{"percent-as-object", `{"containers":[{"name":"c"}],"deploymentStrategy":{"rollingUpdate":{"maxSurge":{"x":1}}}}`,
			"spec.predictor.deploymentStrategy.rollingUpdate.maxSurge: "},
		{"volume-mode", `{"containers":[{"name":"c"}],"volumes":[{"name":"v","secret":{"defaultMode":"0644"}}]}`,
			"spec.predictor.volumes[0].secret.defaultMode: must be a whole number, not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := `{"apiVersion":"serving.serval.dev/v1beta1","kind":"InferenceServiceList","metadata":{},"items":[` +
				item("before", good) + "," + item("bad", tt.predictor) + "," + item("after", good) + `]}`
			out := &v1beta1.InferenceServiceList{}
			_, _, err := codecs.UniversalDeserializer().Decode([]byte(list), nil, out)
			require.NoError(t, err, "one bad item must not fail the list")
			require.Len(t, out.Items, 3)
			for _, i := range []int{0, 2} {
				assert.Empty(t, out.Items[i].DecodeError)
				assert.Equal(t, "sklearn", out.Items[i].Spec.Predictor.Model.ModelFormat.Name)
			}
			bad := out.Items[1]
			assert.Contains(t, bad.DecodeError, tt.want)
			assert.Equal(t, "bad", bad.Name, "metadata survives")
			assert.Equal(t, "u-bad", string(bad.UID))
			assert.Equal(t, "http://bad", bad.Status.URL, "status survives")
			assert.Nil(t, bad.Spec.Predictor.Model, "no half-decoded spec")
			assert.Empty(t, bad.Spec.Predictor.Containers)
		})
	}
}

// TestDecodeIntoUsedObject resets what a previous decode left: a fixed object
// loses its DecodeError, a broken one loses its old spec.
func TestDecodeIntoUsedObject(t *testing.T) {
	isvc := &v1beta1.InferenceService{}
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(item("x", `{"containers":[{"ports":[{"containerPort":"1"}]}]}`)), isvc))
	require.NotEmpty(t, isvc.DecodeError)
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(item("x", `{"containers":[{"name":"c"}]}`)), isvc))
	assert.Empty(t, isvc.DecodeError)
	assert.Len(t, isvc.Spec.Predictor.Containers, 1)
	require.NoError(t, sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(item("x", `{"containers":"nope"}`)), isvc))
	assert.Contains(t, isvc.DecodeError, "spec.predictor.containers: ")
	assert.Empty(t, isvc.Spec.Predictor.Containers)
}

// TestMetadataThatDoesNotDecode is still an error: that is not an
// InferenceService at all.
func TestMetadataThatDoesNotDecode(t *testing.T) {
	err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(`{"metadata":{"name":5}}`), &v1beta1.InferenceService{})
	assert.Error(t, err)
}
