package llmobjects

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/presets"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=serval-routing-sidecar

// RoutingSidecar is the container of llm-d's routing sidecar, which the
// decode presets put in front of vLLM.
const RoutingSidecar = "llm-d-routing-sidecar"

// SidecarClusterRole is the ClusterRole the chart installs with what the
// routing sidecar reads (pods and InferencePools, for its SSRF
// protection); a RoleBinding per service grants it.
const SidecarClusterRole = "serval-routing-sidecar"

// SidecarServiceAccountName is the ServiceAccount of pods with the routing
// sidecar whose template names none, KServe's name.
func SidecarServiceAccountName(svc string) string { return kmeta.ChildName(svc, "-kserve") }

func sidecarRoleBindingName(svc string) string { return kmeta.ChildName(svc, "-kserve-rb") }

// routingSidecar returns the pod's routing sidecar, nil when it has none.
func routingSidecar(pod *corev1.PodSpec) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		if i := slices.IndexFunc(list, func(c corev1.Container) bool { return c.Name == RoutingSidecar }); i >= 0 {
			return &list[i]
		}
	}
	return nil
}

// prepareRoutingSidecar gives a pod with the routing sidecar its own
// ServiceAccount unless the template names one (so that the grant below
// goes to these pods alone, not to every pod of the namespace's default
// account), and tells the sidecar its pool, as KServe does.
func prepareRoutingSidecar(in Inputs, pod *corev1.PodSpec) {
	s := routingSidecar(pod)
	if s == nil {
		return
	}
	if pod.ServiceAccountName == "" {
		pod.ServiceAccountName = SidecarServiceAccountName(in.Service.Name)
	}
	if HasScheduler(in.Spec) {
		setEnv(s, "INFERENCE_POOL_NAME", presets.PoolName(in.Service, in.Spec.Router))
	}
}

// SidecarObjects are what the routing sidecars of the service's pods need:
// the ServiceAccount Serval gives them, and a RoleBinding of
// SidecarClusterRole to every account they run as. None without a sidecar.
func SidecarObjects(in Inputs, workloads []*PartWorkload) []apply.Object {
	svc := in.Service
	var accounts []string
	for _, w := range workloads {
		for _, c := range []*components.Component{w.Leader, w.Worker} {
			if c != nil && routingSidecar(&c.Pod) != nil && !slices.Contains(accounts, c.Pod.ServiceAccountName) {
				accounts = append(accounts, c.Pod.ServiceAccountName)
			}
		}
	}
	if len(accounts) == 0 {
		return nil
	}
	slices.Sort(accounts)
	labels, ref := commonLabels(svc, Workload), owner.OfLLM(svc).Reference()
	key := func(name string) types.NamespacedName {
		return types.NamespacedName{Namespace: svc.Namespace, Name: name}
	}
	var objs []apply.Object
	binding := rbacv1ac.RoleBinding(sidecarRoleBindingName(svc.Name), svc.Namespace).WithLabels(labels).WithOwnerReferences(ref).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(SidecarClusterRole))
	for _, sa := range accounts {
		if sa == SidecarServiceAccountName(svc.Name) {
			objs = append(objs, apply.Object{GVK: ServiceAccountKind.GVK, Key: key(sa),
				Spec: corev1ac.ServiceAccount(sa, svc.Namespace).WithLabels(labels).WithOwnerReferences(ref)})
		}
		binding.WithSubjects(rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(sa).WithNamespace(svc.Namespace))
	}
	return append(objs, apply.Object{GVK: RoleBindingKind.GVK, Key: key(sidecarRoleBindingName(svc.Name)), Spec: binding})
}
