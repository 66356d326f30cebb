package clustertest

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestComponentHeaderNeedsTheOwnersUID: the header Serval's route sets
// names a component only with the UID of the object that controls the
// component's Service, as the activator reads it from the cluster. A client
// that names another team's component without it (the attack of a shared
// activator) is resolved by its Host, here to nothing: a 404, answered at
// once instead of being held for the component.
func TestComponentHeaderNeedsTheOwnersUID(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	k8s := env.Client
	r := startRig(ctx, t, k8s, env.Config, activator.Limits{HoldTimeout: time.Minute})

	// The component's Service, controlled by an owner whose UID the
	// route's header carries.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: component.Namespace, Name: "iris-owner"}}
	require.NoError(t, k8s.Create(ctx, owner))
	svc := &corev1.Service{}
	require.NoError(t, k8s.Get(ctx, component, svc))
	svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	require.NoError(t, k8s.Update(ctx, svc))

	send := func(header string) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort(r.ip, strconv.Itoa(r.port)), nil)
		req.Host = "gateway.example.com"
		req.Header.Set(v1beta1.ComponentHeader, header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	name := component.Namespace + "/" + component.Name
	testenv.Eventually(t, "the header with the owner's UID names the component (the request is held)", func() bool {
		go func() { _, _ = send(name + "/" + string(owner.UID)) }()
		return r.a.Demand(component) > 0
	})
	for _, forged := range []string{name, name + "/", name + "/0a8b2c4e-0000-4000-8000-000000000000"} {
		status, err := send(forged)
		require.NoError(t, err, forged)
		assert.Equal(t, http.StatusNotFound, status, "a header without the owner's UID: %q", forged)
	}
}
