package llmobjects

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// The endpoint picker's ServiceAccount is applied but never listed or
// watched: the manager holds no right to list ServiceAccounts.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=inference.networking.k8s.io,resources=inferencepools,verbs=get;list;watch;create;update;patch;delete
// What the picker may read is the ClusterRole the chart installs
// (PickerClusterRole); a RoleBinding per service grants it in the
// service's namespace. Binding it needs this right, on it alone, instead of
// the manager holding every right the picker needs.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=serval-endpoint-picker

// The kinds an LLMInferenceService creates beyond the Deployments, Services
// and HTTPRoutes of the modes and routers.
var (
	// InferencePoolKind is the Gateway API Inference Extension's pool.
	InferencePoolKind = kinds.Kind{GVK: igwapi.SchemeGroupVersion.WithKind("InferencePool"),
		CRD:     "inferencepools.inference.networking.k8s.io",
		Install: "install the Gateway API Inference Extension's CRDs (v1.0 or later), or bring your own pool with router.scheduler.pool.ref",
		Typed:   func() client.Object { return &igwapi.InferencePool{} }, StatusSignal: poolSignal}
	// ServiceAccountKind is the endpoint picker's identity. It is not in
	// Kinds: never cached, listed or pruned (the owner reference deletes it
	// with the service).
	ServiceAccountKind = kinds.Kind{GVK: corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		Typed: func() client.Object { return &corev1.ServiceAccount{} }}
	// RoleBindingKind grants the picker's ClusterRole in the namespace.
	RoleBindingKind = kinds.Kind{GVK: rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
		Typed: func() client.Object { return &rbacv1.RoleBinding{} }}
)

// PickerClusterRole is the ClusterRole the chart installs with what the
// endpoint picker reads (pods, InferencePools and objectives, EndpointSlices,
// its leader-election Leases).
const PickerClusterRole = "serval-endpoint-picker"

// Kinds are the kinds of this package, for the registry of child kinds (package childkinds).
func Kinds() []kinds.Kind {
	return []kinds.Kind{InferencePoolKind, RoleBindingKind, LeaderWorkerSetKind, ResourceClaimTemplateKind}
}

// poolSignal is what Serval reads of a pool: its parents' conditions.
func poolSignal(obj client.Object) string {
	pool, ok := obj.(*igwapi.InferencePool)
	if !ok {
		return ""
	}
	sig := ""
	for _, p := range pool.Status.Parents {
		sig += string(p.ParentRef.Name) + ":"
		for _, c := range p.Conditions {
			sig += c.Type + "=" + string(c.Status) + "/" + c.Reason + ";"
		}
	}
	return sig
}
