package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/boundedevents"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
)

// agentUser is the node agent's identity: its ServiceAccount in the
// manager's namespace.
const agentUser = "system:serviceaccount:serval-system:serval-node-agent"

// nodeNameClaim is what a pod-bound ServiceAccount token says of its node.
const nodeNameClaim = "authentication.kubernetes.io/node-name"

// asAgent is a client configuration that acts as the agent's
// ServiceAccount on node, as its pod-bound token does, so the agent runs
// with the rights the chart grants it and no more.
func asAgent(node string) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: agentUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:serval-system", "system:authenticated"},
		Extra:  map[string][]string{nodeNameClaim: {node}}}
	return cfg
}

// grantAgentRights applies the agent's roles as config/rbac/node-agent
// holds them (the chart's copies are checked equal by make manifests),
// bound to its ServiceAccount.
func grantAgentRights(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	for _, f := range []string{"role.yaml", "config-role.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "node-agent", f))
		require.NoError(t, err)
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var obj struct{ Kind string }
			require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
			var o client.Object
			switch obj.Kind {
			case "ClusterRole":
				o = &rbacv1.ClusterRole{}
			case "Role":
				o = &rbacv1.Role{}
			case "RoleBinding":
				o = &rbacv1.RoleBinding{}
			default:
				continue
			}
			require.NoError(t, yaml.Unmarshal([]byte(doc), o))
			require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, o)))
		}
	}
	policy, err := testenv.PolicyObjects("node-agent.yaml")
	require.NoError(t, err)
	for _, o := range policy {
		require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, o)))
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "serval-node-agent"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "serval-node-agent"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "serval-node-agent", Namespace: "serval-system"}}}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, binding)))
}

var downloadsOnce sync.Once

// startDownloads runs the manager's downloads controller for the rest of
// the process: it runs the Jobs the agents no longer may.
func startDownloads(t *testing.T) {
	t.Helper()
	downloadsOnce.Do(func() {
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: k8s.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
			Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
		require.NoError(t, err)
		recorder := boundedevents.Recorder(mgr.GetEventRecorder("serval-manager"))
		d := &localmodel.Downloads{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
			Config: config.NewStore(mgr.GetClient(), "serval-system", recorder)}
		require.NoError(t, d.SetupWithManager(mgr))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = mgr.Start(ctx); close(done) }()
		// Stopped before the API server, whose stop waits for its watches.
		env.AddCleanup(func() { cancel(); <-done })
	})
}

// TestAgentRights: the agent's identity, asked of the real API server, may
// read and report its LocalModelNodes and read serval-config, and may not
// read a Secret, a ServiceAccount, a Pod or another ConfigMap anywhere,
// nor create or delete a Job in any namespace, its own and the Jobs' included.
func TestAgentRights(t *testing.T) {
	setUp(t)
	ctx := context.Background()
	cases := []struct {
		attrs authorizationv1.ResourceAttributes
		allow bool
	}{
		{authorizationv1.ResourceAttributes{Group: "serving.serval.dev", Resource: "localmodelnodes", Verb: "watch"}, true},
		{authorizationv1.ResourceAttributes{Group: "serving.serval.dev", Resource: "localmodelnodes", Subresource: "status", Verb: "patch", Name: "gpu-1"}, true},
		{authorizationv1.ResourceAttributes{Resource: "configmaps", Verb: "get", Namespace: "serval-system", Name: "serval-config"}, true},
		{authorizationv1.ResourceAttributes{Group: "events.k8s.io", Resource: "events", Verb: "create", Namespace: "default"}, true},
		{authorizationv1.ResourceAttributes{Group: "events.k8s.io", Resource: "events", Verb: "create", Namespace: "team"}, false},
		{authorizationv1.ResourceAttributes{Group: "", Resource: "events", Verb: "create", Namespace: "team"}, false},

		{authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "get", Namespace: "team", Name: "hf-token"}, false},
		{authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "list"}, false},
		{authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "get", Namespace: "serval-system", Name: "serval-webhook-cert"}, false},
		{authorizationv1.ResourceAttributes{Resource: "serviceaccounts", Verb: "list"}, false},
		{authorizationv1.ResourceAttributes{Resource: "serviceaccounts", Verb: "get", Namespace: "team", Name: "default"}, false},
		{authorizationv1.ResourceAttributes{Resource: "pods", Verb: "list"}, false},
		{authorizationv1.ResourceAttributes{Resource: "configmaps", Verb: "get", Namespace: "serval-system", Name: "other"}, false},
		{authorizationv1.ResourceAttributes{Resource: "configmaps", Verb: "list", Namespace: "team"}, false},
		{authorizationv1.ResourceAttributes{Group: "batch", Resource: "jobs", Verb: "create", Namespace: "team"}, false},
		{authorizationv1.ResourceAttributes{Group: "batch", Resource: "jobs", Verb: "create", Namespace: jobNamespace}, false},
		{authorizationv1.ResourceAttributes{Group: "batch", Resource: "jobs", Verb: "delete", Namespace: jobNamespace}, false},
		{authorizationv1.ResourceAttributes{Group: "serving.serval.dev", Resource: "localmodelnodes", Verb: "update", Name: "gpu-1"}, false},
		{authorizationv1.ResourceAttributes{Group: "serving.serval.dev", Resource: "localmodelnodes", Verb: "delete", Name: "gpu-1"}, false},
	}
	for _, tc := range cases {
		a := tc.attrs
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: agentUser,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:serval-system", "system:authenticated"}, ResourceAttributes: &a}}
		require.NoError(t, k8s.Create(ctx, sar))
		require.Equalf(t, tc.allow, sar.Status.Allowed, "%s %s/%s %s in %q: allowed %v (%s)", a.Verb, a.Resource, a.Subresource, a.Name, a.Namespace, sar.Status.Allowed, sar.Status.Reason)
	}
}

// TestAgentWritesItsOwnNode: an agent's identity, bound to one node, may
// write that node's report and is refused another node's, by the chart's
// admission policy.
func TestAgentWritesItsOwnNode(t *testing.T) {
	setUp(t)
	ctx := context.Background()
	for _, name := range []string{"own-node", "other-node"} {
		n := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, n)))
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), n) })
	}
	agent, err := client.New(asAgent("own-node"), client.Options{Scheme: k8s.Scheme()})
	require.NoError(t, err)
	report := func(name string) error {
		n := &v1alpha1.LocalModelNode{}
		if err := agent.Get(ctx, types.NamespacedName{Name: name}, n); err != nil {
			return err
		}
		patch := client.MergeFrom(n.DeepCopy())
		n.Status.Copies = map[string]v1alpha1.LocalModelCopy{"m": {State: v1alpha1.CopyPresent, Digest: "forged"}}
		return agent.Status().Patch(ctx, n, patch)
	}
	eventually(t, "the policy loaded", func() bool {
		err := report("other-node")
		return err != nil && strings.Contains(err.Error(), "may write the LocalModelNode of its own node only, not other-node")
	})
	require.NoError(t, report("own-node"), "its own node's report")
}
