package standard

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
)

// H2CAppProtocol marks a gRPC (HTTP/2 cleartext) Service port for gateways
// (and the activator, which holds no gRPC).
const H2CAppProtocol = "kubernetes.io/h2c"

// MakeService returns the ClusterIP Service in front of c: port 80 to the
// serving port, and each gRPC port as itself with appProtocol h2c.
func MakeService(c *components.Component) *corev1ac.ServiceApplyConfiguration {
	ports := []*corev1ac.ServicePortApplyConfiguration{
		corev1ac.ServicePort().WithName("http").WithPort(80).WithProtocol(corev1.ProtocolTCP).
			WithTargetPort(intstr.FromInt32(c.TargetPort())),
	}
	for _, p := range c.Ports {
		if !p.GRPC {
			continue
		}
		ports = append(ports, corev1ac.ServicePort().WithName(portName(p)).WithPort(p.ContainerPort).
			WithProtocol(corev1.ProtocolTCP).WithTargetPort(intstr.FromInt32(p.ContainerPort)).
			WithAppProtocol(H2CAppProtocol))
	}
	svc := corev1ac.Service(c.Name, c.Namespace()).
		WithLabels(c.Labels)
	if c.ScalesFromZero() {
		// The activator takes the Service's traffic while no replica is
		// ready; the hosts tell it which component a request is for.
		svc.WithLabels(map[string]string{v1beta1.ScaleFromZeroLabel: "true"})
		if len(c.Hosts) > 0 {
			svc.WithAnnotations(map[string]string{v1beta1.HostsAnnotation: strings.Join(c.Hosts, ",")})
		}
	}
	return svc.
		WithOwnerReferences(c.Owner.Reference()).
		WithSpec(corev1ac.ServiceSpec().
			WithType(corev1.ServiceTypeClusterIP).
			WithSelector(c.Selector).
			WithPorts(ports...))
}

func portName(p components.Port) string {
	if p.Name == "" || p.Name == "http" {
		return "grpc"
	}
	return p.Name
}
