package standard

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/kinds"
	"github.com/serval-dev/serval/pkg/controller/workload"
)

// RBAC for the kinds below (controller-gen reads these free-standing markers).
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete

// The kinds a Standard workload consists of.
var (
	DeploymentKind = kinds.Kind{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Typed: func() client.Object { return &appsv1.Deployment{} },
		StatusSignal: DeploymentSignal}
	// A Service has no generation: an update can only be told from drift by
	// reading it, so every update counts (a ClusterIP Service's status does
	// not change anyway).
	ServiceKind = kinds.Kind{GVK: corev1.SchemeGroupVersion.WithKind("Service"), Typed: func() client.Object { return &corev1.Service{} }}
	HPAKind     = kinds.Kind{GVK: autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		Typed: func() client.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }, StatusSignal: HPASignal}
)

// Mode is the Standard deployment mode.
type Mode struct{}

var _ workload.Mode = Mode{}

// Name implements workload.Mode.
func (Mode) Name() v1beta1.DeploymentMode { return v1beta1.Standard }

// Workload implements workload.Mode.
func (Mode) Workload() kinds.Kind { return DeploymentKind }

// Kinds implements workload.Mode.
func (Mode) Kinds() []kinds.Kind {
	return []kinds.Kind{DeploymentKind, ServiceKind, HPAKind, ScaledObjectKind, OpenTelemetryCollectorKind}
}

// Objects implements workload.Mode: a Deployment, a Service and, with
// autoscalerClass hpa, an HPA; with keda, a KEDA ScaledObject (and for
// PodMetric triggers, KServe's OpenTelemetryCollector).
func (Mode) Objects(c *components.Component) ([]apply.Object, error) {
	dep, err := MakeDeployment(c)
	if err != nil {
		return nil, err
	}
	objs := []apply.Object{
		{GVK: DeploymentKind.GVK, Key: c.Key(), Spec: dep, OmitsReplicas: !OwnsReplicas(c)},
		{GVK: ServiceKind.GVK, Key: c.Key(), Spec: MakeService(c)},
	}
	if c.Worker != nil {
		more, err := workerObjects(c)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	if WantsHPA(c) {
		objs = append(objs, apply.Object{GVK: HPAKind.GVK, Key: c.Key(), Spec: MakeHPA(c)})
	}
	if WantsScaledObject(c) {
		so, err := MakeScaledObject(c)
		if err != nil {
			return nil, err
		}
		objs = append(objs, apply.Object{GVK: ScaledObjectKind.GVK, Key: c.Key(), Spec: client.ApplyConfigurationFromUnstructured(so)})
		if otel := MakeOpenTelemetryCollector(c); otel != nil {
			objs = append(objs, apply.Object{GVK: OpenTelemetryCollectorKind.GVK, Key: c.Key(), Spec: client.ApplyConfigurationFromUnstructured(otel)})
		}
	}
	return objs, nil
}

// Refuse implements workload.Mode: a Deployment takes any pod the API
// server takes.
func (Mode) Refuse(*components.Component, workload.Cluster) *workload.Refusal { return nil }

// ComponentStatus implements workload.Mode: a Standard component's status is
// its readiness and addresses only.
func (Mode) ComponentStatus(*v1beta1.ComponentStatus, v1beta1.ComponentStatus, workload.State) {}
