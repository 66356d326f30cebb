package clustertest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestOnlyTheManagerClaimsHosts: under the chart's policy
// serval-scale-from-zero-claims, a namespace user who may write Services
// cannot mark one for scale from zero nor claim hosts for it (another
// team's host would then resolve to neither at the activator), nor change
// the claims of one the manager made; their other changes to it stand; the
// manager's account makes and changes claims.
func TestOnlyTheManagerClaimsHosts(t *testing.T) {
	ctx := context.Background()
	env, err := testenv.Start(testenv.Options{SkipUpstreamCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	k8s := env.Client
	const ns = "team-b"
	require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "services-writer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"*"}}}}))
	as := func(user string, groups ...string) client.Client {
		require.NoError(t, k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "writer-"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "services-writer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user}}}))
		c, err := client.New(testenv.AsUser(env.Config, user, groups...), client.Options{Scheme: k8s.Scheme()})
		require.NoError(t, err)
		return c
	}
	manager := as("system:serviceaccount:serval-system:serval-manager", "system:serviceaccounts")
	alice := as("alice")
	policy, err := testenv.PolicyObjects("scale-from-zero.yaml")
	require.NoError(t, err)
	for _, o := range policy {
		require.NoError(t, k8s.Create(ctx, o))
	}
	service := func(name string, claims bool) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
		if claims {
			s.Labels = map[string]string{v1beta1.ScaleFromZeroLabel: "true"}
			s.Annotations = map[string]string{v1beta1.HostsAnnotation: "iris-team-a.example.com"}
		}
		return s
	}
	const refused = "only Serval's manager marks a Service for scale from zero and names its hosts"
	testenv.Eventually(t, "the policy in force", func() bool {
		probe := service("probe", true)
		err := alice.Create(ctx, probe)
		if err == nil {
			_ = k8s.Delete(ctx, probe)
		}
		return err != nil && strings.Contains(err.Error(), refused)
	})

	// The manager's Service, with its claims.
	own := service("iris-predictor", true)
	require.NoError(t, manager.Create(ctx, own))
	for name, change := range map[string]func(*corev1.Service){
		"claim another host":     func(s *corev1.Service) { s.Annotations[v1beta1.HostsAnnotation] = "shop-team-c.example.com" },
		"drop the claims":        func(s *corev1.Service) { delete(s.Annotations, v1beta1.HostsAnnotation) },
		"unmark scale from zero": func(s *corev1.Service) { delete(s.Labels, v1beta1.ScaleFromZeroLabel) },
	} {
		s := &corev1.Service{}
		require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(own), s))
		change(s)
		err := alice.Update(ctx, s)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), refused, name)
		}
	}
	err = alice.Create(ctx, service("squatter", true))
	if assert.Error(t, err, "a Service of alice's claiming a host") {
		assert.Contains(t, err.Error(), "alice may not set or change")
	}
	// Alice's other changes stand; the manager changes its claims.
	s := &corev1.Service{}
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(own), s))
	s.Labels["team"] = "b"
	require.NoError(t, alice.Update(ctx, s), "a change that keeps the claims")
	require.NoError(t, alice.Create(ctx, service("plain", false)), "a Service without claims")
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(own), s))
	s.Annotations[v1beta1.HostsAnnotation] = "iris-team-b.example.com"
	require.NoError(t, manager.Update(ctx, s))
}
