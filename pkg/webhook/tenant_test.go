package webhook_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"
)

// tenant is a namespace user: admin of its own namespace (the built-in
// admin ClusterRole, bound there), nothing else.
type tenant struct {
	name, namespace string
	client          client.Client
}

// newTenant makes the namespace, binds the user as its admin, and returns
// a client that acts as the user. extra rules are granted in the namespace
// besides.
func newTenant(t *testing.T, name string, extra ...rbacv1.PolicyRule) tenant {
	t.Helper()
	ctx := context.Background()
	ns := name + "-ns"
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})))
	// envtest's API server has no controller-manager to make the built-in
	// roles' aggregation, so the admin role is granted as its own rules.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin", Namespace: ns}, Rules: append([]rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "serving.serval.dev"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	}, extra...)}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, role)))
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, binding)))
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	require.NoError(t, err)
	return tenant{name: name, namespace: ns, client: c}
}

func (tn tenant) create(manifest string) error {
	obj := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		return err
	}
	obj.SetNamespace(tn.namespace)
	return tn.client.Create(context.Background(), obj)
}

const routeOnTheSharedGateway = `  model: {uri: hf://facebook/opt-125m}
  router:
    route:
      http:
        spec:
          hostnames: [victim.example.com]
          rules:
          - matches:
            - headers: [{name: x-team, value: victim}]
`

// TestRouteOfTheUsersDesignNeedsTheirRight: Serval makes an HTTPRoute of a
// user's design only for a user who may make HTTPRoutes; its own route
// (from the presets) needs no such right; a preset is held to the same
// rule as a service.
func TestRouteOfTheUsersDesignNeedsTheirRight(t *testing.T) {
	plain := newTenant(t, "team-plain")
	err := plain.create(llmYAML("LLMInferenceService", "hijack", routeOnTheSharedGateway))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.router.route.http.spec: Forbidden: Serval makes this HTTPRoute for you only if you may make it yourself, "+
		"and team-plain may not create httproutes.gateway.networking.k8s.io in namespace team-plain-ns")
	err = plain.create(llmYAML("LLMInferenceServiceConfig", "hijack-preset", routeOnTheSharedGateway))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "may not create httproutes.gateway.networking.k8s.io")
	require.NoError(t, plain.create(llmYAML("LLMInferenceService", "own-route", "  model: {uri: hf://facebook/opt-125m}\n  router:\n    route: {}\n")),
		"Serval's own route needs no right of the user's")

	routes := newTenant(t, "team-routes", rbacv1.PolicyRule{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes"}, Verbs: []string{"create"}})
	require.NoError(t, routes.create(llmYAML("LLMInferenceService", "designed", routeOnTheSharedGateway)), "a user who may make routes may have Serval make one")
}
