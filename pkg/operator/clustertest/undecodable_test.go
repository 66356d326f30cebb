package clustertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/operator"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, SkipUpstreamCRDs: true, Scheme: operator.Scheme()},
		func(e *testenv.Environment) { env = e })
}

// unguard makes the schema at each path (property names below the version's
// openAPIV3Schema) schemaless again, as it was before the CRD typed it:
// objects created meanwhile are stored with values that do not decode, as an
// older release of the CRD let them be. restore puts the typed schema back.
func unguard(t *testing.T, crdName string, paths ...string) (restore func()) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: crdName}, crd))
	orig := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := versions[0].(map[string]any)
	for _, path := range paths {
		fields := []string{"schema", "openAPIV3Schema"}
		for _, name := range strings.Split(path, ".") {
			fields = append(fields, "properties", name)
		}
		require.NoError(t, unstructured.SetNestedField(version, map[string]any{"x-kubernetes-preserve-unknown-fields": true}, fields...))
	}
	require.NoError(t, unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"))
	require.NoError(t, env.Client.Update(ctx, crd))
	return func() {
		live := orig.DeepCopy()
		require.NoError(t, env.Client.Get(ctx, types.NamespacedName{Name: crdName}, live))
		spec, _, _ := unstructured.NestedMap(orig.Object, "spec")
		require.NoError(t, unstructured.SetNestedMap(live.Object, spec, "spec"))
		require.NoError(t, env.Client.Update(ctx, live))
	}
}

// createEventually creates a manifest, retrying while the API server still
// applies the previous schema.
func createEventually(t *testing.T, manifest string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &u.Object))
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := env.Client.Create(context.Background(), u.DeepCopy())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s: %v", u.GetName(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const (
	isvcCRD = "inferenceservices.serving.serval.dev"
	csrCRD  = "clusterservingruntimes.serving.serval.dev"
)

func isvcManifest(name, predictor string) string {
	return fmt.Sprintf("apiVersion: serving.serval.dev/v1beta1\nkind: InferenceService\nmetadata: {name: %s, namespace: undecodable}\nspec:\n  predictor: %s\n", name, predictor)
}

func runtimeManifest(name, format, container string) string {
	return fmt.Sprintf("apiVersion: serving.serval.dev/v1alpha1\nkind: ClusterServingRuntime\nmetadata: {name: %s}\nspec:\n"+
		"  supportedModelFormats: [{name: %s, autoSelect: true, priority: 1}]\n  protocolVersions: [v1]\n  containers: [%s]\n", name, format, container)
}

// TestUndecodableObjectsDoNotStopOthers creates, with no webhook, objects
// whose stored spec does not decode (some through the schemaless CRD of an
// older release, one in a field the guard leaves schemaless), then starts
// the manager: a valid InferenceService beside them goes Ready, each bad one
// is reported by name (Ready condition, Event, metric), and fixing one brings
// it back.
func TestUndecodableObjectsDoNotStopOthers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := env.Client
	for _, ns := range []string{"serval-system", "undecodable"} {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	restoreISVC := unguard(t, isvcCRD, "spec.predictor.containers", "spec.predictor.model.resources", "spec.predictor.deploymentStrategy")
	restoreCSR := unguard(t, csrCRD, "spec.containers")
	bad := map[string]string{
		"bad-cpu":     "{model: {modelFormat: {name: sklearn}, resources: {requests: {cpu: lots}}}}",
		"bad-port":    `{containers: [{name: c, image: i, ports: [{containerPort: "8080"}]}]}`,
		"bad-percent": "{containers: [{name: c, image: i}], deploymentStrategy: {rollingUpdate: {maxUnavailable: {a: 1}}}}",
		// env is never typed by the CRD: this one is stored even today.
		"bad-env": "{containers: [{name: c, image: i, env: [{name: A, value: 8080}]}]}",
	}
	for name, predictor := range bad {
		createEventually(t, isvcManifest(name, predictor))
	}
	createEventually(t, runtimeManifest("broken", "sklearn", `{name: kserve-container, image: b, ports: [{containerPort: "8080"}]}`))
	restoreISVC()
	restoreCSR()
	createEventually(t, runtimeManifest("sklearn-good", "sklearn", "{name: kserve-container, image: s}"))
	createEventually(t, isvcManifest("good", "{model: {modelFormat: {name: sklearn}, storageUri: 'gs://b/m'}}"))

	probe := startManager(ctx, t, env.Config)

	eventually(t, "the good predictor's Deployment", func() bool {
		return c.Get(ctx, types.NamespacedName{Namespace: "undecodable", Name: "good-predictor"}, &appsv1.Deployment{}) == nil
	})
	makeAvailable(t, "undecodable", "good-predictor")
	eventually(t, "good Ready", func() bool { return readyReason(t, "good") == v1beta1.ReasonAllComponentsReady })
	good := getISVC(t, "good")
	assert.Equal(t, "sklearn-good", good.Status.ClusterServingRuntimeName, "the broken runtime is skipped, the good one chosen")

	wantPath := map[string]string{
		"bad-cpu":     "spec.predictor.model.resources.requests.cpu: quantities must match",
		"bad-port":    "spec.predictor.containers[0].ports[0].containerPort: must be a whole number, not a string",
		"bad-percent": "spec.predictor.deploymentStrategy.rollingUpdate.maxUnavailable: ",
		"bad-env":     "spec.predictor.containers[0].env[0].value: must be a string, not a number",
	}
	for name, want := range wantPath {
		eventually(t, name+" reported", func() bool { return readyReason(t, name) == v1beta1.ReasonUndecodableSpec })
		ready := meta.FindStatusCondition(getISVC(t, name).Status.Conditions, v1beta1.ConditionReady)
		assert.Contains(t, ready.Message, want)
		assert.Equal(t, 1.0, undecodableGauge(t, "InferenceService", "undecodable", name))
		eventually(t, name+" Event", func() bool { return hasEvent(t, "undecodable", name, want) })
		assert.False(t, exists(&appsv1.Deployment{}, "undecodable", name+"-predictor"), "nothing is rendered from %s", name)
	}
	assert.Equal(t, 1.0, undecodableGauge(t, "ClusterServingRuntime", "", "broken"))
	eventually(t, "broken runtime Event", func() bool {
		return hasEvent(t, "default", "broken", "spec.containers[0].ports[0].containerPort: must be a whole number, not a string")
	})
	assertReady(t, probe, http.StatusOK)

	// A fix is a spec change like any other: the InferenceService is
	// reconciled, and the gauge drops it.
	fixed := &unstructured.Unstructured{}
	fixed.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("InferenceService"))
	require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: "undecodable", Name: "bad-env"}, fixed))
	require.NoError(t, unstructured.SetNestedSlice(fixed.Object, []any{map[string]any{"name": "c", "image": "i",
		"env": []any{map[string]any{"name": "A", "value": "8080"}}}}, "spec", "predictor", "containers"))
	require.NoError(t, c.Update(ctx, fixed))
	eventually(t, "the fixed one's Deployment", func() bool { return exists(&appsv1.Deployment{}, "undecodable", "bad-env-predictor") })
	eventually(t, "the gauge drops the fixed one", func() bool {
		return undecodableSeries(t) == len(bad)-1+1 // three InferenceServices and the runtime
	})
}

// TestReadinessFailsUntilCachesSync runs the manager without the right to
// list ConfigMaps (serval-config): that informer cannot sync, and /readyz says so
// instead of 200. (A kind whose informer starts with the cache itself, such
// as Pods with their index, would also keep the manager from stopping:
// controller-runtime waits for that cache without end.)
func TestReadinessFailsUntilCachesSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	data, err := os.ReadFile(repoPath(t, "config/rbac/role.yaml"))
	require.NoError(t, err)
	// The generated ClusterRole, and the rules of the generated Role (the
	// manager's own namespace) granted cluster-wide for simplicity.
	role := &rbacv1.ClusterRole{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		r := &rbacv1.ClusterRole{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), r))
		role.Rules = append(role.Rules, r.Rules...)
	}
	role.Name = "serval-manager-without-configmaps"
	var rules []rbacv1.PolicyRule
	for _, rule := range role.Rules {
		var kept []string
		for _, r := range rule.Resources {
			if r != "configmaps" {
				kept = append(kept, r)
			}
		}
		if len(kept) > 0 {
			rule.Resources = kept
			rules = append(rules, rule)
		}
	}
	role.Rules = rules
	require.NoError(t, env.Client.Create(ctx, role))
	require.NoError(t, env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "no-configmaps"}},
	}))
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "no-configmaps"}
	probe := startManager(ctx, t, cfg)
	// controller-runtime answers a failed check with 500.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		assertReady(t, probe, http.StatusInternalServerError)
		time.Sleep(500 * time.Millisecond)
	}
}

// startManager starts a manager on cfg with its probes on a free port and
// returns the probe address; it stops with ctx.
func startManager(ctx context.Context, t *testing.T, cfg *rest.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	mgr, err := operator.New(ctx, cfg, operator.Options{Namespace: "serval-system", MetricsAddr: "0", HealthProbeAddr: addr, SkipNameValidation: true})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	t.Cleanup(func() { <-done })
	return addr
}

// assertReady checks the /readyz answer, waiting for the probe server to listen.
func assertReady(t *testing.T, addr string, want int) {
	t.Helper()
	var resp *http.Response
	eventually(t, "the probe server", func() bool {
		var err error
		resp, err = http.Get("http://" + addr + "/readyz")
		return err == nil
	})
	defer resp.Body.Close()
	assert.Equal(t, want, resp.StatusCode)
}

func readyReason(t *testing.T, name string) string {
	t.Helper()
	if c := meta.FindStatusCondition(getISVC(t, name).Status.Conditions, v1beta1.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}

func getISVC(t *testing.T, name string) *v1beta1.InferenceService {
	t.Helper()
	isvc := &v1beta1.InferenceService{}
	require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: "undecodable", Name: name}, isvc))
	return isvc
}

func exists(obj client.Object, ns, name string) bool {
	return env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj) == nil
}

// hasEvent reports whether an Event about the named object mentions want.
func hasEvent(t *testing.T, ns, name, want string) bool {
	t.Helper()
	list := &eventsv1.EventList{}
	require.NoError(t, env.Client.List(context.Background(), list, client.InNamespace(ns)))
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == v1beta1.ReasonUndecodableSpec && strings.Contains(e.Note, want) {
			return true
		}
	}
	return false
}

// makeAvailable plays the Deployment controller for one Deployment.
func makeAvailable(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "Deployment "+name+" available", func() bool {
		dep := &appsv1.Deployment{}
		if env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dep) != nil {
			return false
		}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}
		return env.Client.Status().Update(context.Background(), dep) == nil
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	return root + "/" + rel
}

// undecodableGauge reads serval_undecodable_objects for one object.
func undecodableGauge(t *testing.T, kind, ns, name string) float64 {
	t.Helper()
	v, _, err := testenv.MetricSum("serval_undecodable_objects", map[string]string{"kind": kind, "namespace": ns, "name": name})
	require.NoError(t, err)
	return v
}

// undecodableSeries counts the series of serval_undecodable_objects.
func undecodableSeries(t *testing.T) int {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == "serval_undecodable_objects" {
			return len(f.GetMetric())
		}
	}
	return 0
}
