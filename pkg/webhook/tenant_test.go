package webhook_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
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
	c, err := client.New(testenv.AsUser(env.Config, name), client.Options{Scheme: k8s.Scheme()})
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

// withAnnotations adds n one-letter-valued annotations to a manifest's
// metadata: a map whose every element a printf width would pad.
func withAnnotations(n int, manifest string) string {
	var b strings.Builder
	b.WriteString("metadata:\n  annotations:\n")
	for i := range n {
		fmt.Fprintf(&b, "    a%d: x\n", i)
	}
	return strings.Replace(manifest, "metadata:\n", b.String(), 1)
}

// heapPeak samples the process's heap (the manager runs in this process)
// until stop is called, and returns the largest sample above the heap at
// its start.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
					peak.Store(m.HeapAlloc - base)
				}
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// TestTenantSuite plays a hostile namespace user against a shared cluster:
// team-a, admin of its own namespace only, tries every attack of Serval's
// tenant probes that admission must stop, while team-b runs a service
// beside it. Each attempt is refused with a message that names the field
// and the rule; team-b's objects are untouched; the manager's heap never
// grows by more than 50 MB (a template bomb admitted would take it to
// gigabytes).
func TestTenantSuite(t *testing.T) {
	a, b := newTenant(t, "team-a"), newTenant(t, "team-b")
	require.NoError(t, b.create(llmYAML("LLMInferenceService", "victim", "  model: {uri: hf://facebook/opt-125m}\n")))
	victim := &v1alpha2.LLMInferenceService{}
	require.NoError(t, b.client.Get(context.Background(), client.ObjectKey{Namespace: b.namespace, Name: "victim"}, victim))
	peak := heapPeak()

	const bomb = "'{{ range 20000000 }}aaaaaaaaaa{{ end }}'"
	attacks := []struct {
		name, manifest, want string
	}{
		{"a template bomb in a service's variable", llmYAML("LLMInferenceService", "bomb-env",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, env: [{name: X, value: "+bomb+"}]}]\n"),
			"spec.template.containers[0].env[0].value: Invalid value: \"{{ range 20000000 }}aaaaaaaaaa{{ end }}\": template: bomb-env:1:20: the output passes the bound of 65536 (serval-config templates.maxOutputBytes)"},
		{"a template bomb across two arguments", llmYAML("LLMInferenceService", "bomb-args",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, args: ['{{ range 20000000 }}', 'aaaaaaaaaa{{ end }}']}]\n"),
			"spec.template.containers[0].args[0]: Invalid value: \"{{ range 20000000 }}\": does not parse as a template (each string is a template of its own)"},
		{"templates that pass the bound only together", llmYAML("LLMInferenceService", "bomb-together",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, args: ['{{ range 5000 }}aaaaaaaaaa{{ end }}', '{{ range 5000 }}aaaaaaaaaa{{ end }}']}]\n"),
			"spec: Invalid value: \"(the templates of the whole spec)\""},
		{"a template bomb in a preset", llmYAML("LLMInferenceServiceConfig", "bomb-preset",
			"  template:\n    containers: [{name: main, args: ["+bomb+"]}]\n"),
			"the output passes the bound of 65536 (serval-config templates.maxOutputBytes)"},
		{"a printf width in a runtime", runtimeYAML("ServingRuntime", "bomb-runtime",
			"  supportedModelFormats: [{name: bomb}]\n  containers: [{name: kserve-container, image: example.com/s:1, args: ['{{ printf \"%0999999999d\" 1 }}']}]\n"),
			"spec.containers[0].args[0]: Invalid value: \"{{ printf \\\"%0999999999d\\\" 1 }}\": template: :1:3: a printf width or precision of 999999999 passes the bound of 1024 (serval-config templates.maxFormatWidth)"},
		{"a template bomb in an InferenceService", isvcYAML("bomb-isvc", "",
			"    model:\n      modelFormat: {name: sklearn}\n      storageUri: gs://models/iris\n      env: [{name: X, value: "+bomb+"}]\n"),
			"spec.predictor.model.env[0].value"},
		{"a route on the shared Gateway through Serval's rights", llmYAML("LLMInferenceService", "hijack", routeOnTheSharedGateway),
			"spec.router.route.http.spec: Forbidden: Serval makes this HTTPRoute for you only if you may make it yourself, and team-a may not create httproutes.gateway.networking.k8s.io in namespace team-a-ns"},
		{"a route of a preset through Serval's rights", llmYAML("LLMInferenceServiceConfig", "hijack-preset", routeOnTheSharedGateway),
			"may not create httproutes.gateway.networking.k8s.io in namespace team-a-ns"},
		{"tensor parallelism of a million", llmYAML("LLMInferenceService", "tensor",
			"  model: {uri: hf://facebook/opt-125m}\n  parallelism: {tensor: 1000000}\n"),
			"spec.parallelism.tensor: Invalid value: 1000000: tensor parallelism is at most 64"},
		{"a printf width over every annotation", withAnnotations(2000, llmYAML("LLMInferenceService", "width-annotations",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, env: [{name: X, value: '{{ printf `%65536v` .ObjectMeta.Annotations }}'}]}]\n")),
			"a printf width or precision of 65536 passes the bound of 1024 (serval-config templates.maxFormatWidth)"},
		{"a small printf width over every annotation", withAnnotations(2000, llmYAML("LLMInferenceService", "small-width",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, env: [{name: X, value: '{{ printf `%1000v` .ObjectMeta.Annotations }}'}]}]\n")),
			"a printf width or precision on a map, list or object pads each of its elements and is not supported"},
		{"the service printed 6,000 times", withAnnotations(2000, llmYAML("LLMInferenceService", "repeat",
			"  model: {uri: hf://facebook/opt-125m}\n  template:\n    containers: [{name: main, env: [{name: X, value: '{{ printf `"+strings.Repeat("%[1]v", 6000)+"` . }}'}]}]\n")),
			"what printf may write (by the size of its arguments) passes the bound of 65536"},
		{"a runtime's printf over an InferenceService's annotations", withAnnotations(2000, isvcYAML("width-isvc", "",
			"    model:\n      modelFormat: {name: sklearn}\n      storageUri: gs://models/iris\n      env: [{name: X, value: '{{ printf `%65536v` .Annotations }}'}]\n")),
			"spec.predictor.model.env[0].value"},
		{"a picker config the picker cannot load", llmYAML("LLMInferenceService", "picker",
			"  model: {uri: hf://facebook/opt-125m}\n  router:\n    scheduler:\n      config:\n        inline: {kind: Nope, plugins: notalist}\n"),
			"spec.router.scheduler.config.inline.kind: Invalid value: \"Nope\": the picker reads kind EndpointPickerConfig"},
	}
	for _, at := range attacks {
		t.Run(at.name, func(t *testing.T) {
			err := a.create(at.manifest)
			require.Error(t, err, "admitted")
			assert.Contains(t, err.Error(), at.want)
		})
	}

	// Another tenant's objects are out of reach, and untouched.
	other := victim.DeepCopy()
	other.Spec.Replicas = nil
	err := a.client.Update(context.Background(), other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forbidden")
	after := &v1alpha2.LLMInferenceService{}
	require.NoError(t, k8s.Get(context.Background(), client.ObjectKey{Namespace: b.namespace, Name: "victim"}, after))
	assert.Equal(t, victim.Spec, after.Spec, "team-b's service")

	grew := peak()
	t.Logf("the manager's heap grew by at most %d KiB during the attacks", grew>>10)
	assert.Less(t, grew, uint64(50<<20), "the manager's heap during the attacks")
}

// TestRouteOfTheUsersDesignNeedsTheirRight: Serval makes an HTTPRoute of a
// user's design, on a service or a preset, for a user who may make
// HTTPRoutes (the refusals of those who may not are in TestTenantSuite);
// its own route (from the presets) needs no such right; and an update that
// leaves the route spec as it was is not asked again, while one that
// changes it is.
func TestRouteOfTheUsersDesignNeedsTheirRight(t *testing.T) {
	ctx := context.Background()
	plain := newTenant(t, "team-plain")
	require.NoError(t, plain.create(llmYAML("LLMInferenceService", "own-route", "  model: {uri: hf://facebook/opt-125m}\n  router:\n    route: {}\n")),
		"Serval's own route needs no right of the user's")
	routes := newTenant(t, "team-routes", rbacv1.PolicyRule{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes"}, Verbs: []string{"create"}})
	require.NoError(t, routes.create(llmYAML("LLMInferenceService", "designed", routeOnTheSharedGateway)), "a user who may make routes may have Serval make one")
	require.NoError(t, routes.create(llmYAML("LLMInferenceServiceConfig", "designed-preset", routeOnTheSharedGateway)))

	// A route spec an administrator wrote into team-plain's namespace: its
	// user, who may not make routes, may still label the service, but not
	// change the route.
	byAdmin := &v1alpha2.LLMInferenceService{}
	require.NoError(t, sigsyaml.Unmarshal([]byte(llmYAML("LLMInferenceService", "by-admin", routeOnTheSharedGateway)), byAdmin))
	byAdmin.Namespace = plain.namespace
	require.NoError(t, k8s.Create(ctx, byAdmin))
	// The manager writes the object too (its finalizer): each update is
	// made again on a conflict, never on a refusal.
	update := func(change func(*v1alpha2.LLMInferenceService)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			mine := &v1alpha2.LLMInferenceService{}
			if err := plain.client.Get(ctx, client.ObjectKey{Namespace: plain.namespace, Name: "by-admin"}, mine); err != nil {
				return err
			}
			change(mine)
			return plain.client.Update(ctx, mine)
		})
	}
	require.NoError(t, update(func(s *v1alpha2.LLMInferenceService) { s.Labels = map[string]string{"touched": "yes"} }),
		"an update that leaves the route spec as it was is not asked again")
	err := update(func(s *v1alpha2.LLMInferenceService) {
		s.Spec.Router.Route.HTTP.Spec.Hostnames = []gwapiv1.Hostname{"other.example.com"}
	})
	require.Error(t, err, "a changed route spec is asked again")
	assert.Contains(t, err.Error(), "team-plain may not create httproutes.gateway.networking.k8s.io")
}
