package children

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	igwapi "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=inference.networking.k8s.io,resources=inferencepools,verbs=get;list;watch;create;update;patch;delete
// The endpoint picker's Role grants what follows; Kubernetes lets Serval
// grant only what it holds itself.
// +kubebuilder:rbac:groups=inference.networking.k8s.io;inference.networking.x-k8s.io,resources=inferenceobjectives;inferencemodels,verbs=get;list;watch
// +kubebuilder:rbac:groups=inference.networking.x-k8s.io,resources=inferencemodelrewrites;inferencepoolimports,verbs=get;list;watch
// +kubebuilder:rbac:groups=llm-d.ai,resources=inferenceobjectives;inferencemodelrewrites,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// The kinds an LLMInferenceService creates beyond the Deployments, Services
// and HTTPRoutes of the modes and routers.
var (
	// InferencePoolKind is the Gateway API Inference Extension's pool.
	InferencePoolKind = kinds.Kind{GVK: igwapi.SchemeGroupVersion.WithKind("InferencePool"),
		CRD:     "inferencepools.inference.networking.k8s.io",
		Install: "install the Gateway API Inference Extension's CRDs (v1.0 or later), or bring your own pool with router.scheduler.pool.ref",
		Typed:   func() client.Object { return &igwapi.InferencePool{} }, StatusSignal: poolSignal}
	// ServiceAccountKind is the endpoint picker's identity.
	ServiceAccountKind = kinds.Kind{GVK: corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		Typed: func() client.Object { return &corev1.ServiceAccount{} }}
	// RoleKind is what the endpoint picker may read.
	RoleKind = kinds.Kind{GVK: rbacv1.SchemeGroupVersion.WithKind("Role"),
		Typed: func() client.Object { return &rbacv1.Role{} }}
	// RoleBindingKind grants the Role to the endpoint picker.
	RoleBindingKind = kinds.Kind{GVK: rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
		Typed: func() client.Object { return &rbacv1.RoleBinding{} }}
)

// Kinds are the kinds of this package, for the registry.
func Kinds() []kinds.Kind {
	return []kinds.Kind{InferencePoolKind, ServiceAccountKind, RoleKind, RoleBindingKind}
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
