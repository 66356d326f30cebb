package apply

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestFreshReader(t *testing.T) {
	ctx := context.Background()
	cached := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "in-cache", ResourceVersion: "5"}}
	cache := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cached).Build()
	created := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "just-created", ResourceVersion: "9"}}
	knative := &unstructured.Unstructured{}
	knative.SetGroupVersionKind(schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"})
	knative.SetNamespace("ns")
	knative.SetName("just-created")
	r := NewFreshReader(cache, []client.Object{created, knative})

	got := &networkingv1.Ingress{}
	require.NoError(t, r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "just-created"}, got))
	assert.Equal(t, "9", got.ResourceVersion, "a created object the cache has not seen is read as created")
	got.Labels = map[string]string{"changed": "by the reader"}
	assert.Empty(t, created.Labels, "the reader hands out copies")

	require.NoError(t, r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "in-cache"}, got))
	assert.Equal(t, "in-cache", got.Name, "the cache answers first")

	err := r.Get(ctx, client.ObjectKey{Namespace: "other", Name: "just-created"}, got)
	assert.True(t, apierrors.IsNotFound(err), "another namespace: not found, %v", err)

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"})
	err = r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "just-created"}, u)
	assert.True(t, apierrors.IsNotFound(err), "an unstructured read of another kind does not get the Knative Service: %v", err)

	u.SetGroupVersionKind(knative.GroupVersionKind())
	require.NoError(t, r.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "just-created"}, u))
	assert.Equal(t, "Service", u.GetKind())

	assert.Same(t, cache, NewFreshReader(cache, nil), "nothing created: the cache itself")
}
