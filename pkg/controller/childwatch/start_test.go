package childwatch

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// startingController is a controller whose Watch waits, as a
// controller-runtime controller's does while it starts (it holds the lock
// Watch takes until its sources have synced).
type startingController struct {
	controller.Controller
	// waiting is closed once a Watch waits; started lets it return.
	waiting, started chan struct{}
}

func (c startingController) Watch(source.TypedSource[reconcile.Request]) error {
	close(c.waiting)
	<-c.started
	return nil
}

// TestCRDEventsDoNotWaitForAWatchStarting: while the watch of an optional
// kind waits for its controller to start, the CRD events' handler still
// runs (the controller's start waits for that handler's source: were the
// handler to wait for the watch, the start would stall until its cache-sync
// timeout).
func TestCRDEventsDoNotWaitForAWatchStarting(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, apiextensionsv1.AddToScheme(scheme))
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "scaledobjects.keda.sh"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(crd).Build()
	kind := kinds.Kind{GVK: schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}, CRD: crd.Name,
		Typed: func() client.Object {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("keda.sh/v1alpha1")
			u.SetKind("ScaledObject")
			return u
		}}
	w := New(nil, scheme, nil, reader, &corev1.ConfigMap{}, []kinds.Kind{kind})
	ctrl := startingController{waiting: make(chan struct{}), started: make(chan struct{})}
	started := make(chan error, 1)
	go func() { started <- w.Start(context.Background(), ctrl) }()
	<-ctrl.waiting

	handled := make(chan bool, 1)
	go func() { handled <- w.CRDChanged(context.Background(), crd) }()
	select {
	case <-handled:
	case <-time.After(5 * time.Second):
		t.Fatal("the CRD event waited for a watch that waits for the controller to start")
	}
	close(ctrl.started)
	require.NoError(t, <-started)
	require.True(t, w.Present(kind))
}
