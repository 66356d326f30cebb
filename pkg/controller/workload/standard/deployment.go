package standard

import (
	"encoding/json"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/serval-dev/serval/pkg/controller/components"
)

// OwnsReplicas reports whether Serval sets the Deployment's replicas: only
// when no autoscaler does.
func OwnsReplicas(c *components.Component) bool {
	return !c.Autoscaled
}

// MakeDeployment returns the Deployment that runs c.
func MakeDeployment(c *components.Component) (*appsv1ac.DeploymentApplyConfiguration, error) {
	template, err := podTemplate(c)
	if err != nil {
		return nil, err
	}
	spec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(c.Selector)).
		WithTemplate(template)
	if OwnsReplicas(c) {
		spec.WithReplicas(c.Replicas)
	}
	if s := c.Extension.DeploymentStrategy; s != nil {
		strategy, err := strategyOf(s)
		if err != nil {
			return nil, err
		}
		spec.WithStrategy(strategy)
	}
	return appsv1ac.Deployment(c.Name, c.Namespace()).
		WithLabels(c.Labels).
		WithAnnotations(c.Annotations).
		WithOwnerReferences(c.Owner.Reference()).
		WithSpec(spec), nil
}

// podTemplate converts the component's pod into an apply configuration,
// with a default readiness probe on the serving port unless an agent runs
// the server's probe.
func podTemplate(c *components.Component) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	probePort := c.ServingPort()
	if c.AgentPort != 0 {
		probePort = 0
	}
	return PodTemplateOf(c.Name, c.Pod, c.Labels, c.Annotations, probePort)
}

// PodTemplateOf converts a pod into an apply configuration. The conversion
// goes through JSON: every PodSpec field whose zero value would be encoded
// (no omitempty) is one the API requires anyway, such as container names,
// so no defaulted field becomes owned by Serval. probePort, when not 0,
// gives the first container a TCP readiness probe if it has none.
func PodTemplateOf(name string, pod corev1.PodSpec, labels, annotations map[string]string, probePort int32) (*corev1ac.PodTemplateSpecApplyConfiguration, error) {
	pod = *pod.DeepCopy()
	if probePort != 0 {
		addDefaultReadinessProbe(&pod, probePort)
	}
	data, err := json.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("encode the pod of %s: %w", name, err)
	}
	spec := &corev1ac.PodSpecApplyConfiguration{}
	if err := json.Unmarshal(data, spec); err != nil {
		return nil, fmt.Errorf("convert the pod of %s: %w", name, err)
	}
	return corev1ac.PodTemplateSpec().
		WithLabels(maps.Clone(labels)).
		WithAnnotations(annotations).
		WithSpec(spec), nil
}

// addDefaultReadinessProbe gives the serving container a TCP readiness probe
// on the serving port when it has none: without one a pod counts as ready
// before the model server listens.
func addDefaultReadinessProbe(pod *corev1.PodSpec, port int32) {
	server := &pod.Containers[0]
	if server.ReadinessProbe != nil {
		return
	}
	server.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)},
	}}
}

func strategyOf(s *appsv1.DeploymentStrategy) (*appsv1ac.DeploymentStrategyApplyConfiguration, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := &appsv1ac.DeploymentStrategyApplyConfiguration{}
	return out, json.Unmarshal(data, out)
}
