package llmobjects

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"knative.dev/pkg/kmeta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// The picker checks who scrapes its metrics with TokenReviews and
// SubjectAccessReviews, which system:auth-delegator grants. The manager
// binds that ClusterRole alone (bind, by name) and manages the bindings
// it makes, which carry AuthDelegatorOwnerLabel.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=system:auth-delegator

// AuthDelegatorRole is the ClusterRole a managed picker's ServiceAccount
// is bound to.
const AuthDelegatorRole = "system:auth-delegator"

// AuthDelegatorOwnerLabel names, by UID, the LLMInferenceService a
// ClusterRoleBinding was made for: a cluster-scoped object cannot carry a
// namespaced owner's reference, so this label is how the manager knows
// its own (and never writes over or deletes another's of the same name).
const AuthDelegatorOwnerLabel = "serving.serval.dev/llminferenceservice-uid"

// ClusterRoleBindingKind is the picker's cluster binding. It is not in
// Kinds: not watched, and pruned through AuthDelegatorScope, by the owner
// label, since the garbage collector cannot delete it with the service.
var ClusterRoleBindingKind = kinds.Kind{GVK: rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"),
	Typed: func() client.Object { return &rbacv1.ClusterRoleBinding{} }}

// AuthDelegatorBindingName is the binding's name, as KServe names it:
// {namespace}-{name}-epp-auth-rb, shortened with a hash past 63
// characters.
func AuthDelegatorBindingName(svc *v1alpha2.LLMInferenceService) string {
	return kmeta.ChildName(svc.Namespace, "-"+svc.Name+"-epp-auth-rb")
}

// AuthDelegatorBinding binds the picker's ServiceAccount to
// AuthDelegatorRole.
func AuthDelegatorBinding(svc *v1alpha2.LLMInferenceService, serviceAccount string) apply.Object {
	name := AuthDelegatorBindingName(svc)
	labels := commonLabels(svc, Scheduler)
	labels[AuthDelegatorOwnerLabel] = string(svc.UID)
	return apply.Object{GVK: ClusterRoleBindingKind.GVK, Key: types.NamespacedName{Name: name}, OwnerLabel: AuthDelegatorOwnerLabel,
		Spec: rbacv1ac.ClusterRoleBinding(name).WithLabels(labels).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(AuthDelegatorRole)).
			WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(serviceAccount).WithNamespace(svc.Namespace))}
}

// AuthDelegatorScope selects the bindings made for the service, to prune.
func AuthDelegatorScope(svc *v1alpha2.LLMInferenceService) apply.PruneScope {
	return apply.PruneScope{Labels: map[string]string{AuthDelegatorOwnerLabel: string(svc.UID)}, Owner: svc.UID,
		OwnerLabel: AuthDelegatorOwnerLabel, Kinds: []schema.GroupVersionKind{ClusterRoleBindingKind.GVK}}
}
