package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/operator"
)

const managerNamespace = "serval-system"

var (
	env    *testenv.Environment
	k8s    client.Client
	writes testenv.WriteLog
	// reconciles is the evidence that a check for "no writes" watched the
	// reconcile it means to.
	reconciles = testenv.NewReconciles()
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(reconciles.Logger(zap.New(zap.WriteTo(os.Stderr), zap.Level(testenv.ManagerLogLevel())).GetSink()))
	testenv.RunMain(m, testenv.Options{CRDPaths: []string{"config/crd/bases"}, Scheme: operator.Scheme()},
		func(e *testenv.Environment) {
			env, k8s = e, e.Client
			if err := startManager(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		})
}

func startManager() error {
	err := env.StartManager(managerNamespace, writes.Wrap, func(ctx context.Context, cfg *rest.Config) (testenv.Starter, error) {
		return operator.New(ctx, cfg, operator.Options{Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0"})
	})
	if err != nil {
		return err
	}
	return installPresets(context.Background())
}

// installPresets installs the presets Serval ships, as the chart does.
func installPresets(ctx context.Context) error {
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(root, "config/llmisvcconfig/*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		cfg := &v1alpha2.LLMInferenceServiceConfig{}
		if err := sigsyaml.Unmarshal(data, cfg); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		cfg.Namespace = managerNamespace
		if err := k8s.Create(ctx, cfg); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	return nil
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "llm-"}}
	require.NoError(t, k8s.Create(context.Background(), ns))
	return ns.Name
}

func get(t *testing.T, ns, name string) *v1alpha2.LLMInferenceService {
	t.Helper()
	svc := &v1alpha2.LLMInferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, svc))
	return svc
}

// condition returns a condition of the service as "Status/Reason", or "".
func condition(t *testing.T, ns, name, typ string) string {
	t.Helper()
	return statusReason(get(t, ns, name).Status.Conditions, typ)
}

// statusReason is a condition of conds as "Status/Reason", or "".
func statusReason(conds []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

func message(t *testing.T, ns, name, typ string) string {
	t.Helper()
	if c := meta.FindStatusCondition(get(t, ns, name).Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}

func exists(obj client.Object, ns, name string) bool {
	return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj) == nil
}

// makeAvailable plays the Deployment controller: the Deployment's replicas
// are all available.
func makeAvailable(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "Deployment "+name, func() bool { return exists(&appsv1.Deployment{}, ns, name) })
	require.NoError(t, retryOnConflict(func() error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		r := ptr.Deref(dep.Spec.Replicas, 1)
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: r, UpdatedReplicas: r, ReadyReplicas: r, AvailableReplicas: r,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}}}
		return k8s.Status().Update(context.Background(), dep)
	}))
}

func retryOnConflict(f func() error) error {
	var err error
	for range 10 {
		if err = f(); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// eventually polls cond until it holds, or fails the test after 30 s.
var eventually = testenv.Eventually

func getConfig(t *testing.T, ns, name string) *v1alpha2.LLMInferenceServiceConfig {
	t.Helper()
	cfg := &v1alpha2.LLMInferenceServiceConfig{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cfg))
	return cfg
}

// configCondition returns a condition of the preset as "Status/Reason",
// or "".
func configCondition(t *testing.T, ns, name, typ string) string {
	t.Helper()
	return statusReason(getConfig(t, ns, name).Status.Conditions, typ)
}

// hasEvent reports whether an Event of the reason was recorded on the
// object of the name in ns.
func hasEvent(t *testing.T, ns, name, reason string) bool {
	t.Helper()
	events := &eventsv1.EventList{}
	require.NoError(t, k8s.List(context.Background(), events, client.InNamespace(ns)))
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}
