package clustertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/llmobjects"
)

// binding is the cluster binding of that name, or nil.
func binding(t *testing.T, name string) *rbacv1.ClusterRoleBinding {
	t.Helper()
	crb := &rbacv1.ClusterRoleBinding{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Name: name}, crb); err != nil {
		return nil
	}
	return crb
}

// TestPickerAuthDelegatorBinding: a managed picker's ServiceAccount is
// bound to system:auth-delegator by {namespace}-{name}-epp-auth-rb, which
// a finalizer deletes with the service (a cluster-scoped object is not
// deleted with a namespaced owner); stopping the service deletes it too;
// a binding of that name that is not the service's is never written over.
func TestPickerAuthDelegatorBinding(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createGateway(t, ns, "inference-gateway", "10.0.0.10")
	spec := `
  model: {uri: hf://meta-llama/Llama-3.1-8B-Instruct}
  router:
    route: {}
    gateway: {refs: [{name: inference-gateway}]}
    scheduler: {}
`
	createService(t, ns, "llama", spec)
	name := ns + "-llama-epp-auth-rb"
	eventually(t, "the binding", func() bool { return binding(t, name) != nil })
	crb := binding(t, name)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}, crb.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "llama-epp-sa", Namespace: ns}}, crb.Subjects)
	svc := get(t, ns, "llama")
	assert.Equal(t, string(svc.UID), crb.Labels[llmobjects.AuthDelegatorOwnerLabel])
	assert.True(t, controllerutil.ContainsFinalizer(svc, llminferenceservice.BindingFinalizer))

	setStop := func(on bool) {
		require.NoError(t, retryOnConflict(func() error {
			s := get(t, ns, "llama")
			s.Annotations = map[string]string{v1alpha2.StopAnnotation: "true"}
			if !on {
				s.Annotations = nil
			}
			return k8s.Update(ctx, s)
		}))
	}
	setStop(true)
	eventually(t, "no binding while stopped, and no finalizer", func() bool {
		return binding(t, name) == nil && !controllerutil.ContainsFinalizer(get(t, ns, "llama"), llminferenceservice.BindingFinalizer)
	})
	setStop(false)
	eventually(t, "the binding back", func() bool { return binding(t, name) != nil })

	// Another service's namespace and name that make the same binding
	// name find it taken: not theirs, not written.
	foreign := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-other-epp-auth-rb"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "someone", Namespace: "elsewhere"}}}
	require.NoError(t, k8s.Create(ctx, foreign))
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), foreign) })
	createService(t, ns, "other", spec)
	eventually(t, "the conflict named", func() bool {
		return condition(t, ns, "other", "SchedulerWorkloadReady") == "False/ConflictingObject" &&
			message(t, ns, "other", "SchedulerWorkloadReady") == "ClusterRoleBinding "+foreign.Name+
				" exists and is not controlled by this LLMInferenceService (controller: none); delete or rename it"
	})
	assert.Equal(t, foreign.Subjects, binding(t, foreign.Name).Subjects, "a binding that is not the service's is left as it is")

	require.NoError(t, k8s.Delete(ctx, get(t, ns, "llama")))
	eventually(t, "the binding deleted with the service", func() bool {
		return binding(t, name) == nil && !exists(&v1alpha2.LLMInferenceService{}, ns, "llama")
	})
	require.NotNil(t, binding(t, foreign.Name), "the other's binding stays")
}
