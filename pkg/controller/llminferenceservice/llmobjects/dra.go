package llmobjects

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcev1ac "k8s.io/client-go/applyconfigurations/resource/v1"
	"knative.dev/pkg/kmeta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// +kubebuilder:rbac:groups=resource.k8s.io,resources=resourceclaimtemplates,verbs=get;list;watch;create;update;patch;delete

// ResourceClaimTemplateKind is the template of the devices a service with
// managed device allocation claims for each model pod. Serval reads
// nothing of it back.
var ResourceClaimTemplateKind = kinds.Kind{GVK: resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate"),
	Typed: func() client.Object { return &resourcev1.ResourceClaimTemplate{} }, StatusSignal: kinds.NoStatus}

// DRAClaimName is the name of the claim every model pod of a service with
// managed device allocation has, and its container uses (KServe's).
const DRAClaimName = "managed-device"

// draRequestName is the template's one device request (KServe's).
const draRequestName = "device"

// DRATemplateName is the service's ResourceClaimTemplate.
func DRATemplateName(svc string) string { return kmeta.ChildName(svc, "-managed-dra") }

// managedDRA is the service's managed device allocation; nil without one
// (admission refuses wrong annotations; a service stored before is
// refused by the reconcile's own check).
func managedDRA(in Inputs) *v1alpha2.ManagedDRA {
	d, _ := v1alpha2.ManagedDRAOf(in.Service.Annotations)
	return d
}

// DRAObjects are the service's ResourceClaimTemplate, as KServe makes it:
// one request of the device class, of count devices when more than one,
// with the CEL selectors. None without managed device allocation.
func DRAObjects(in Inputs) []apply.Object {
	d := managedDRA(in)
	if d == nil {
		return nil
	}
	svc := in.Service
	exactly := resourcev1ac.ExactDeviceRequest().WithDeviceClassName(d.DeviceClass)
	if d.Count > 1 {
		exactly.WithCount(d.Count)
	}
	for _, expr := range d.Selectors {
		exactly.WithSelectors(resourcev1ac.DeviceSelector().WithCEL(resourcev1ac.CELDeviceSelector().WithExpression(expr)))
	}
	name := DRATemplateName(svc.Name)
	template := resourcev1ac.ResourceClaimTemplate(name, svc.Namespace).
		WithLabels(commonLabels(svc, Workload)).
		WithOwnerReferences(owner.OfLLM(svc).Reference()).
		WithSpec(resourcev1ac.ResourceClaimTemplateSpec().WithSpec(resourcev1ac.ResourceClaimSpec().
			WithDevices(resourcev1ac.DeviceClaim().WithRequests(resourcev1ac.DeviceRequest().WithName(draRequestName).WithExactly(exactly)))))
	return []apply.Object{{GVK: ResourceClaimTemplateKind.GVK, Key: types.NamespacedName{Namespace: svc.Namespace, Name: name}, Spec: template}}
}

// addManagedDRA gives a model pod the claim of the service's template and
// its container (the named one, else the first) the use of it, unless
// they already have them.
func addManagedDRA(in Inputs, pod *corev1.PodSpec) {
	d := managedDRA(in)
	if d == nil {
		return
	}
	if !slices.ContainsFunc(pod.ResourceClaims, func(c corev1.PodResourceClaim) bool { return c.Name == DRAClaimName }) {
		template := DRATemplateName(in.Service.Name)
		pod.ResourceClaims = append(pod.ResourceClaims, corev1.PodResourceClaim{Name: DRAClaimName, ResourceClaimTemplateName: &template})
	}
	i := 0
	if d.Container != "" {
		i = slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == d.Container })
	}
	if i < 0 || i >= len(pod.Containers) {
		return
	}
	c := &pod.Containers[i]
	if !slices.ContainsFunc(c.Resources.Claims, func(rc corev1.ResourceClaim) bool { return rc.Name == DRAClaimName }) {
		c.Resources.Claims = append(c.Resources.Claims, corev1.ResourceClaim{Name: DRAClaimName})
	}
}
