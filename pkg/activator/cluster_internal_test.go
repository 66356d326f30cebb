package activator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestHeldPort: the activator holds a Service's first HTTP port; a gRPC
// (h2c) port is never it.
func TestHeldPort(t *testing.T) {
	grpc := corev1.ServicePort{Name: "grpc", Port: 9000, AppProtocol: ptr.To("kubernetes.io/h2c")}
	http := corev1.ServicePort{Name: "http", Port: 80}
	cases := []struct {
		name  string
		ports []corev1.ServicePort
		want  string
	}{
		{"http first", []corev1.ServicePort{http, grpc}, "http"},
		{"grpc first", []corev1.ServicePort{grpc, http}, "http"},
		{"grpc only", []corev1.ServicePort{grpc}, ""},
	}
	for _, c := range cases {
		p := heldPort(&corev1.Service{Spec: corev1.ServiceSpec{Ports: c.ports}})
		got := ""
		if p != nil {
			got = p.Name
		}
		assert.Equal(t, c.want, got, c.name)
	}
}
