package webhook_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestPoliciesTrustIdentitiesNotNames: every ValidatingAdmissionPolicy
// Serval ships names its accounts by namespace and name. A ServiceAccount
// of the same name in a tenant's namespace, with the same RBAC rights, is
// not taken for Serval's: it gets no exemption (it may not claim another
// team's hosts for scale from zero), and the restrictions written for
// Serval's accounts are not its (its writes are its RBAC's to judge).
func TestPoliciesTrustIdentitiesNotNames(t *testing.T) {
	ctx := context.Background()
	const tenantNS = "impostors"
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}})))
	// Both the real accounts and the tenant's same-named ones get the same
	// rights, so that only the policies tell them apart.
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create", "update"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"create"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}},
		{APIGroups: []string{"serving.serval.dev"}, Resources: []string{"localmodelnodes/status"}, Verbs: []string{"update"}},
	}})))
	var subjects []rbacv1.Subject
	for _, ns := range []string{managerNamespace, tenantNS} {
		for _, sa := range []string{"serval-manager", "serval-activator", "serval-node-agent"} {
			subjects = append(subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: sa, Namespace: ns})
		}
	}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "policy-probe"}, Subjects: subjects})))
	node := &v1alpha1.LocalModelNode{ObjectMeta: metav1.ObjectMeta{Name: "node-x"}}
	require.NoError(t, client.IgnoreAlreadyExists(k8s.Create(ctx, node)))

	// Names of this run's writes: the test runs again in one process.
	run := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 36)
	as := func(namespace, account string) client.Client {
		c, err := client.New(testenv.AsServiceAccount(env.Config, namespace, account), client.Options{Scheme: k8s.Scheme()})
		require.NoError(t, err)
		return c
	}
	cases := []struct {
		file, account, refusal string
		// exempts: the policy lets Serval's account do what it refuses
		// everyone else; otherwise it restricts Serval's account.
		exempts bool
		write   func(c client.Client, name string) error
	}{
		{"scale-from-zero.yaml", "serval-manager", "may not set or change the label serving.serval.dev/scale-from-zero", true,
			func(c client.Client, name string) error {
				return c.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: name,
					Labels:      map[string]string{v1beta1.ScaleFromZeroLabel: "true"},
					Annotations: map[string]string{v1beta1.HostsAnnotation: "iris-team-b.example.com"}},
					Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
			}},
		{"manager-bindings.yaml", "serval-manager", "may write only the bindings it makes", false,
			func(c client.Client, name string) error {
				return c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: name},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "policy-probe"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "someone"}}})
			}},
		{"activator.yaml", "serval-activator", "may write only its own EndpointSlices", false,
			func(c client.Client, name string) error {
				return c.Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: name,
					Labels: map[string]string{discoveryv1.LabelServiceName: "shop"}}, AddressType: discoveryv1.AddressTypeIPv4,
					Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}})
			}},
		{"node-agent.yaml", "serval-node-agent", "may write the LocalModelNode of its own node only", false,
			func(c client.Client, name string) error {
				n := &v1alpha1.LocalModelNode{}
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(node), n); err != nil {
					return err
				}
				n.Status.ModelStatus = map[string]v1alpha1.ModelStatus{name: v1alpha1.ModelDownloaded}
				return c.Status().Update(ctx, n)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			objs, err := testenv.PolicyObjects(tc.file)
			require.NoError(t, err)
			for _, o := range objs {
				require.NoError(t, k8s.Create(ctx, o))
			}
			t.Cleanup(func() {
				for _, o := range objs {
					_ = k8s.Delete(ctx, o)
				}
			})
			serval, impostor := as(managerNamespace, tc.account), as(tenantNS, tc.account)
			// The account the policy refuses shows it in force; the other
			// then makes the same write.
			refused, allowed := serval, impostor
			if tc.exempts {
				refused, allowed = impostor, serval
			}
			n := 0
			var last error
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the last probe: %v", last)
				}
			})
			testenv.Eventually(t, "the policy in force", func() bool {
				n++
				last = tc.write(refused, "probe-"+run+"-"+strconv.Itoa(n))
				return last != nil && strings.Contains(last.Error(), tc.refusal)
			})
			err = tc.write(allowed, "by-the-other-"+run)
			if err != nil {
				assert.NotContains(t, err.Error(), tc.refusal, "%s's policy took %s:%s for Serval's", tc.file, tenantNS, tc.account)
			}
			assert.NoError(t, err, "the write of the account the policy does not refuse")
		})
	}
}
