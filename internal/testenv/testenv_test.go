package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	istionetworking "istio.io/client-go/pkg/apis/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serval-dev/serval/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	testenv.RunMain(m, testenv.Options{Scheme: scheme}, func(e *testenv.Environment) { env = e })
}

// TestUpstreamKindsAreServed checks that the upstream CRDs are installed and
// that the API server serves their kinds: a list of each succeeds.
func TestUpstreamKindsAreServed(t *testing.T) {
	kinds := []schema.GroupVersionKind{
		{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"},
		{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"},
		{Group: "serving.knative.dev", Version: "v1", Kind: "Service"},
		{Group: "serving.knative.dev", Version: "v1", Kind: "Revision"},
		{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
		{Group: "networking.istio.io", Version: "v1", Kind: "DestinationRule"},
	}
	for _, gvk := range kinds {
		t.Run(gvk.Kind+"."+gvk.Group, func(t *testing.T) {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace("default")))
		})
	}
}

// TestUpstreamObjectRoundTrip creates a Knative Service and reads it back, so
// the CRD's schema and storage version really work, not only discovery.
func TestUpstreamObjectRoundTrip(t *testing.T) {
	ctx := context.Background()
	ksvc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "serving.knative.dev/v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": "roundtrip", "namespace": "default"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"image": "example.com/model:1"}},
		}}},
	}}
	require.NoError(t, env.Client.Create(ctx, ksvc))
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(ksvc.GroupVersionKind())
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(ksvc), got))
	image, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	assert.Len(t, image, 1)
}

// TestTypedUpstreamClients creates an HTTPRoute and a VirtualService through
// the upstream Go types, the way Serval's ingress builders will.
func TestTypedUpstreamClients(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	require.NoError(t, gatewayv1.Install(scheme))
	require.NoError(t, istionetworking.AddToScheme(scheme))
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	require.NoError(t, err)
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default"}}
	require.NoError(t, c.Create(ctx, route))
	vs := &istionetworking.VirtualService{ObjectMeta: metav1.ObjectMeta{Name: "vs", Namespace: "default"}}
	vs.Spec.Hosts = []string{"example.com"}
	require.NoError(t, c.Create(ctx, vs))
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(vs), vs))
	assert.Equal(t, []string{"example.com"}, vs.Spec.Hosts)
}

// TestUpstreamCRDCount checks that every upstream project contributed CRDs.
func TestUpstreamCRDCount(t *testing.T) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	require.NoError(t, env.Client.List(context.Background(), crds))
	groups := map[string]int{}
	for _, c := range crds.Items {
		groups[c.Spec.Group]++
	}
	assert.GreaterOrEqual(t, groups["gateway.networking.k8s.io"], 5)
	assert.GreaterOrEqual(t, groups["serving.knative.dev"], 4)
	assert.GreaterOrEqual(t, groups["networking.istio.io"], 5)
}

// TestKEDAVersionIsTheBuiltOperators: the KEDA CRDs the tests install are
// those of the operator make controlplane builds.
func TestKEDAVersionIsTheBuiltOperators(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "test", "controlplane", "build.sh"))
	require.NoError(t, err)
	require.Contains(t, string(data), "\nKEDA_VERSION="+testenv.KEDAVersion+"\n")
}
