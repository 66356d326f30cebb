package webhook_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/operator"
)

// TestCacheSyncBound: a manager whose RBAC cannot list or watch pods (as a
// hand-trimmed Role would) exits its Run within the sync bound, with
// an error that names the kind and the API server's refusal, and leaves
// the same words as its termination message.
func TestCacheSyncBound(t *testing.T) {
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "config/rbac/role.yaml"))
	require.NoError(t, err)
	// Every rule of the generated roles, in one ClusterRole, but pods
	// without list and watch.
	var rules []rbacv1.PolicyRule
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var role rbacv1.ClusterRole
		require.NoError(t, yaml.Unmarshal([]byte(doc), &role))
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, "") && slices.Contains(r.Resources, "pods") {
				// Without list and watch: client-go's informers start with a
				// watch that streams the initial list when the API server
				// offers it, and fall back to a list.
				rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}})
				r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return res == "pods" })
				if len(r.Resources) == 0 {
					continue
				}
			}
			rules = append(rules, r)
		}
	}
	const user = "serval-trimmed"
	require.NoError(t, k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}))
	require.NoError(t, k8s.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}))
	trimmed, err := env.AddUser(envtest.User{Name: user}, env.Config)
	require.NoError(t, err)

	cs, err := kubernetes.NewForConfig(trimmed.Config())
	require.NoError(t, err)
	_, err = cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.Error(t, err, "the trimmed user cannot list pods")
	_, err = cs.CoreV1().ConfigMaps(managerNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "the trimmed user can list what the rest of its rules allow")

	termination := filepath.Join(t.TempDir(), "termination-log")
	require.NoError(t, os.WriteFile(termination, nil, 0o600))
	old := operator.TerminationMessagePath
	operator.TerminationMessagePath = termination
	t.Cleanup(func() { operator.TerminationMessagePath = old })

	opts := operator.Options{Namespace: managerNamespace, MetricsAddr: "0", HealthProbeAddr: "0", WebhookPort: 0, SkipNameValidation: true}

	// SIGTERM while the caches wait: Run returns at its shutdown bound.
	sigCtx, sigterm := context.WithCancel(ctx)
	interrupted, err := operator.New(sigCtx, trimmed.Config(), opts)
	require.NoError(t, err)
	time.AfterFunc(time.Second, sigterm)
	start := time.Now()
	err = interrupted.Run(sigCtx, time.Minute, 2*time.Second)
	assert.Less(t, time.Since(start), 10*time.Second, "SIGTERM during start-up is honoured")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the manager did not stop within 2s")

	mgr, err := operator.New(ctx, trimmed.Config(), opts)
	require.NoError(t, err)
	start = time.Now()
	err = mgr.Run(ctx, 3*time.Second, 30*time.Second)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 8*time.Second, "Run returns at the sync bound, not the shutdown bound after it")
	assert.Contains(t, err.Error(), "the informer caches did not sync within 3s (--cache-sync-timeout); check the manager's RBAC")
	assert.Contains(t, err.Error(), `*v1.Pod: pods is forbidden: User "serval-trimmed" cannot`)
	assert.NotContains(t, err.Error(), "no answer yet", "only the kinds the API server refused are named")
	words, err := os.ReadFile(termination)
	require.NoError(t, err)
	assert.Contains(t, string(words), `pods is forbidden`, "the termination message names the refusal")

	// The manager itself stops only once its caches sync (see Stopped):
	// give the rights back, so that it does and its watches end.
	var role rbacv1.ClusterRole
	require.NoError(t, k8s.Get(ctx, client.ObjectKey{Name: user}, &role))
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}})
	require.NoError(t, k8s.Update(ctx, &role))
	for _, m := range []*operator.Manager{interrupted, mgr} {
		select {
		case <-m.Stopped():
		case <-time.After(60 * time.Second):
			t.Fatal("the manager did not stop once its caches could sync")
		}
	}
}
