package install

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/sandbox"
)

// leftovers lists what of Serval's is in the cluster, besides the CRDs and
// what users made: every object of the kinds the chart or the manager
// creates whose name starts with "serval", as "kind/name".
func leftovers(t *testing.T, sb *sandbox.Sandbox, namespace string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	add := func(kind string, list client.ObjectList, opts ...client.ListOption) {
		require.NoError(t, sb.Client.List(ctx, list, opts...))
		items, err := meta.ExtractList(list)
		require.NoError(t, err)
		for _, item := range items {
			obj, err := meta.Accessor(item)
			require.NoError(t, err)
			if strings.HasPrefix(obj.GetName(), "serval") {
				out = append(out, kind+"/"+obj.GetName())
			}
		}
	}
	in := client.InNamespace(namespace)
	add("secret", &corev1.SecretList{}, in)
	add("configmap", &corev1.ConfigMapList{}, in)
	add("serviceaccount", &corev1.ServiceAccountList{}, in)
	add("service", &corev1.ServiceList{}, in)
	add("deployment", &appsv1.DeploymentList{}, in)
	add("lease", &coordinationv1.LeaseList{}, in)
	add("role", &rbacv1.RoleList{}, in)
	add("rolebinding", &rbacv1.RoleBindingList{}, in)
	add("clusterrole", &rbacv1.ClusterRoleList{})
	add("clusterrolebinding", &rbacv1.ClusterRoleBindingList{})
	add("mutatingwebhookconfiguration", &admissionregistrationv1.MutatingWebhookConfigurationList{})
	add("validatingwebhookconfiguration", &admissionregistrationv1.ValidatingWebhookConfigurationList{})
	sort.Strings(out)
	return out
}
