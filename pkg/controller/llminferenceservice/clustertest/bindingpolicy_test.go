package clustertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// TestManagerWritesOnlyItsOwnBindings: with the chart's RBAC and its
// policy serval-manager-own-bindings, the manager's account makes, updates
// and deletes the bindings it makes for LLMInferenceServices, and nothing
// else: not another's ClusterRoleBinding or RoleBinding, deleted or
// rewritten, nor a binding of its own label to another role.
func TestManagerWritesOnlyItsOwnBindings(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	for _, f := range []string{"role.yaml", "endpoint-picker.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "config", "rbac", f))
		require.NoError(t, err)
		role := &rbacv1.ClusterRole{}
		require.NoError(t, yaml.Unmarshal(data, role))
		role.Name = "policy-test-" + role.Name
		if f == "endpoint-picker.yaml" {
			role.Name = llmobjects.PickerClusterRole
		}
		err = k8s.Create(ctx, role)
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			require.NoError(t, err)
		}
	}
	require.NoError(t, k8s.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "policy-test-serval-manager"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "policy-test-serval-manager"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "serval-manager", Namespace: "serval-system"}}}))
	policy, err := testenv.PolicyObjects("manager-bindings.yaml")
	require.NoError(t, err)
	for _, o := range policy {
		require.NoError(t, k8s.Create(ctx, o))
	}
	t.Cleanup(func() {
		for _, o := range policy {
			_ = k8s.Delete(context.Background(), o)
		}
	})
	manager, err := client.New(testenv.AsServiceAccount(env.Config, "serval-system", "serval-manager"), client.Options{Scheme: k8s.Scheme()})
	require.NoError(t, err)

	// Another team's bindings, made by an administrator.
	theirs := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-x-auditors"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: llmobjects.AuthDelegatorRole},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "auditor", Namespace: ns}}}
	require.NoError(t, k8s.Create(ctx, theirs))
	theirRB := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-x-readers", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: llmobjects.PickerClusterRole},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}}}
	require.NoError(t, k8s.Create(ctx, theirRB))

	const refused = "may write only the bindings it makes for LLMInferenceServices"
	// The policy takes a moment to be in force: a probe of no service is
	// made until it is refused.
	testenv.Eventually(t, "the policy in force", func() bool {
		probe := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe"}, RoleRef: theirs.RoleRef, Subjects: theirs.Subjects}
		err := manager.Create(ctx, probe)
		if err == nil {
			_ = k8s.Delete(ctx, probe)
		}
		return err != nil && strings.Contains(err.Error(), refused)
	})
	for name, write := range map[string]func() error{
		"delete another's ClusterRoleBinding": func() error { return manager.Delete(ctx, theirs.DeepCopy()) },
		"label another's ClusterRoleBinding as its own": func() error {
			b := theirs.DeepCopy()
			patch := client.MergeFrom(b.DeepCopy())
			b.Labels = map[string]string{llmobjects.AuthDelegatorOwnerLabel: "x"}
			return manager.Patch(ctx, b, patch)
		},
		"delete another's RoleBinding": func() error { return manager.Delete(ctx, theirRB.DeepCopy()) },
		"label another's RoleBinding as its own": func() error {
			b := theirRB.DeepCopy()
			patch := client.MergeFrom(b.DeepCopy())
			b.Labels = map[string]string{v1alpha2.LLMInferenceServiceLabel: "x"}
			return manager.Patch(ctx, b, patch)
		},
		"an unlabelled ClusterRoleBinding of its role": func() error {
			return manager.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"},
				RoleRef: theirs.RoleRef, Subjects: theirs.Subjects})
		},
		"a labelled ClusterRoleBinding of a role it may bind in namespaces only": func() error {
			// RBAC lets it bind the picker's role (by name); the policy keeps
			// that role to RoleBindings.
			return manager.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "picker-everywhere",
				Labels: map[string]string{llmobjects.AuthDelegatorOwnerLabel: "uid-1"}},
				RoleRef: theirRB.RoleRef, Subjects: theirRB.Subjects})
		},
	} {
		err := write()
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), refused, name)
		}
	}

	// Its own: made, changed and deleted.
	own := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-svc-epp-auth-rb",
		Labels: map[string]string{llmobjects.AuthDelegatorOwnerLabel: "uid-1", v1alpha2.LLMInferenceServiceLabel: "svc"}},
		RoleRef: theirs.RoleRef, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "svc-epp-sa", Namespace: ns}}}
	require.NoError(t, manager.Create(ctx, own))
	patch := client.MergeFrom(own.DeepCopy())
	own.Subjects[0].Name = "svc-epp-sa-2"
	require.NoError(t, manager.Patch(ctx, own, patch))
	require.NoError(t, manager.Delete(ctx, own))
	ownRB := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "svc-epp-rb", Namespace: ns,
		Labels: map[string]string{v1alpha2.LLMInferenceServiceLabel: "svc"}},
		RoleRef: theirRB.RoleRef, Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "svc-epp-sa", Namespace: ns}}}
	require.NoError(t, manager.Create(ctx, ownRB))
	require.NoError(t, manager.Delete(ctx, ownRB))

	// The others' are untouched.
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs))
	assert.Empty(t, theirs.Labels)
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(theirRB), theirRB))
	assert.Empty(t, theirRB.Labels)
}
