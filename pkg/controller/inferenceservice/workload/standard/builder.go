package standard

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/components"
)

// The kinds a Standard workload consists of.
var (
	DeploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")
	ServiceKind    = corev1.SchemeGroupVersion.WithKind("Service")
	HPAKind        = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
)

// Builder is the Standard-mode workload.Builder.
type Builder struct{}

// Kinds implements workload.Builder.
func (Builder) Kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{DeploymentKind, ServiceKind, HPAKind}
}

// Objects implements workload.Builder: a Deployment, a Service and, with
// autoscalerClass hpa, an HPA.
func (Builder) Objects(c *components.Component) ([]apply.Object, error) {
	key := types.NamespacedName{Namespace: c.Namespace(), Name: c.Name}
	dep, err := MakeDeployment(c)
	if err != nil {
		return nil, err
	}
	objs := []apply.Object{
		{GVK: DeploymentKind, Key: key, Spec: dep, OmitsReplicas: !OwnsReplicas(c)},
		{GVK: ServiceKind, Key: key, Spec: MakeService(c)},
	}
	if WantsHPA(c) {
		objs = append(objs, apply.Object{GVK: HPAKind, Key: key, Spec: MakeHPA(c)})
	}
	return objs, nil
}
