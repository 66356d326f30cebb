package clustertest

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/activator"
	"github.com/serval-dev/serval/pkg/activator/kedascaler"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestScaleFromZero: a component at zero gets the activator's
// EndpointSlice; the KEDA stand-in's stream turns active as requests are
// held; once a replica's endpoint is ready every held request is answered
// 200, the replica sees each once, the activator's slice goes and the
// stream turns inactive. A cold start that fails answers 503 naming it.
func TestScaleFromZero(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	k8s := env.Client
	// The activator runs as its ServiceAccount, with the rights and the
	// admission policy the chart gives it.
	asActivator := grantActivatorRights(t, ctx, k8s, env.Config)
	r := startRig(ctx, t, k8s, asActivator, activator.Limits{HoldTimeout: time.Minute})
	ip, activatorPort := r.ip, r.port

	testenv.Eventually(t, "the activator's EndpointSlice in front of the component at zero", func() bool {
		s := &discoveryv1.EndpointSlice{}
		if k8s.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "iris-predictor-activator"}, s) != nil {
			return false
		}
		return s.Labels[discoveryv1.LabelServiceName] == "iris-predictor" && len(s.Endpoints) == 1 && s.Endpoints[0].Addresses[0] == ip &&
			*s.Ports[0].Port == int32(activatorPort) && *s.Ports[0].Name == "http"
	})

	// KEDA's external-push scaler opens the stream and scales 0→1 when it
	// turns active; here, "a replica" is a local server the Service's
	// EndpointSlice points at.
	conn, err := grpc.NewClient(r.scaler, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	stream, err := externalscaler.NewExternalScalerClient(conn).StreamIsActive(ctx,
		&externalscaler.ScaledObjectRef{Name: "iris-predictor", Namespace: "team-a", ScalerMetadata: map[string]string{kedascaler.ServiceKey: "iris-predictor"}})
	require.NoError(t, err)
	first, err := stream.Recv()
	require.NoError(t, err)
	require.False(t, first.Result)

	rp := startReplica(t)
	const n = 200
	wait := r.send(n, "iris-team-a.example.com")
	active, err := stream.Recv()
	require.NoError(t, err)
	require.True(t, active.Result, "active once a request is held")
	testenv.Eventually(t, "every request held", func() bool { return r.a.Demand(component) == n })

	require.NoError(t, k8s.Create(ctx, slice("team-a", "iris-predictor-abcde", "iris-predictor", "endpointslice-controller.k8s.io", ip, rp.port)))
	rp.servedEachOnce(t, wait())
	testenv.Eventually(t, "the activator's EndpointSlice gone once a replica is ready", func() bool {
		return k8s.Get(ctx, types.NamespacedName{Namespace: "team-a", Name: "iris-predictor-activator"}, &discoveryv1.EndpointSlice{}) != nil
	})
	idle, err := stream.Recv()
	require.NoError(t, err)
	assert.False(t, idle.Result, "inactive once served")

	// Back at zero, and the new replica's image does not pull.
	require.NoError(t, k8s.Delete(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "iris-predictor-abcde"}}))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "iris-1", Labels: map[string]string{"app": "iris", v1beta1.ComponentLabel: "predictor"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "example.com/iris:missing"}}}}
	require.NoError(t, k8s.Create(ctx, pod))
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "kserve-container", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ImagePullBackOff", Message: `Back-off pulling image "example.com/iris:missing"`}}}}
	require.NoError(t, k8s.Status().Update(ctx, pod))
	testenv.Eventually(t, "a held request answered with the reason", func() bool {
		req, _ := http.NewRequest(http.MethodPost, "http://"+net.JoinHostPort(ip, strconv.Itoa(activatorPort)), strings.NewReader("x"))
		req.Host = "iris-predictor.team-a.svc.cluster.local"
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "ImagePullBackOff") && resp.Header.Get("Retry-After") != ""
	})

	// The policy keeps the activator to its own slices.
	own, err := client.New(asActivator, client.Options{Scheme: k8s.Scheme()})
	require.NoError(t, err)
	err = own.Create(ctx, slice("team-a", "iris-predictor-mine", "iris-predictor", activator.ManagedBy, ip, 1234))
	require.Error(t, err, "a slice not named {service}-activator")
	assert.Contains(t, err.Error(), "may write only its own EndpointSlices")
	err = own.Create(ctx, slice("team-a", "other-xyz", "other", "endpointslice-controller.k8s.io", ip, 1234))
	require.Error(t, err, "a slice that Kubernetes would keep")
	kube := slice("team-a", "iris-predictor-kube", "iris-predictor", "endpointslice-controller.k8s.io", ip, 1234)
	require.NoError(t, k8s.Create(ctx, kube))
	assert.Error(t, own.Delete(ctx, kube), "the slices Kubernetes keeps are not the activator's to delete")
}

// grantActivatorRights applies the activator's ClusterRole as
// config/rbac/activator holds it (the chart's copy is checked equal by
// make manifests), bound to its ServiceAccount, and its admission policy;
// it returns a config that acts as the activator.
func grantActivatorRights(t *testing.T, ctx context.Context, k8s client.Client, admin *rest.Config) *rest.Config {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "activator", "role.yaml"))
	require.NoError(t, err)
	role := &rbacv1.ClusterRole{}
	require.NoError(t, yaml.Unmarshal(data, role))
	require.NoError(t, k8s.Create(ctx, role))
	require.NoError(t, k8s.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "serval-activator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "serval-activator", Namespace: "serval-system"}}}))
	policy, err := testenv.PolicyObjects("activator.yaml")
	require.NoError(t, err)
	for _, o := range policy {
		require.NoError(t, k8s.Create(ctx, o))
	}
	cfg := testenv.AsServiceAccount(admin, "serval-system", "serval-activator")
	// The policy takes a moment to be in force.
	testenv.Eventually(t, "the activator's policy in force", func() bool {
		c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
		if err != nil {
			return false
		}
		err = c.Create(ctx, slice("default", "probe-x", "probe", activator.ManagedBy, "10.0.0.1", 1))
		return err != nil && strings.Contains(err.Error(), "may write only its own EndpointSlices")
	})
	return cfg
}
