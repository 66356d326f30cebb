package llminferenceservice

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestGatewayReadOnce: a reconcile reads each Gateway once, whether it
// exists or not, however many times its steps ask.
func TestGatewayReadOnce(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, gatewayv1.Install(scheme))
	gets := map[client.ObjectKey]int{}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "gw", Name: "there"}}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets[key]++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	r := &Reconciler{APIReader: c}
	s := &scope{}
	there, gone := types.NamespacedName{Namespace: "gw", Name: "there"}, types.NamespacedName{Namespace: "gw", Name: "gone"}
	for range 3 {
		gw, err := r.readGateway(context.Background(), s, there)
		require.NoError(t, err)
		assert.Equal(t, "there", gw.Name)
		gw, err = r.readGateway(context.Background(), s, gone)
		require.NoError(t, err)
		assert.Nil(t, gw, "a Gateway that does not exist")
	}
	assert.Equal(t, map[client.ObjectKey]int{there: 1, gone: 1}, gets)
}
