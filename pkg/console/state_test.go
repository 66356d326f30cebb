package console

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// obj is an object of a kind given as Kind.group ("Service" for the core
// one, "Service.serving.knative.dev" for Knative's).
func obj(kind string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	gk := schema.ParseGroupKind(kind)
	u.SetGroupVersionKind(gk.WithVersion("v1"))
	return u
}

// TestChildState: each kind's state read from its status.
func TestChildState(t *testing.T) {
	cond := func(t, status, reason string) map[string]any {
		return map[string]any{"type": t, "status": status, "reason": reason}
	}
	tests := []struct {
		name          string
		u             *unstructured.Unstructured
		state, detail string
	}{
		{"deployment available", obj("Deployment.apps", map[string]any{"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(2)}}), "ok", "2/2 available"},
		{"deployment rolling", obj("Deployment.apps", map[string]any{"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(1)}}), "wait", "1/2 available"},
		{"deployment at zero", obj("Deployment.apps", map[string]any{"spec": map[string]any{"replicas": int64(0)}}), "none", "scaled to zero"},
		{"deployment stuck", obj("Deployment.apps", map[string]any{"spec": map[string]any{"replicas": int64(1)},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Progressing", "status": "False", "message": "ProgressDeadlineExceeded"}}}}), "fail", "0/1 available: ProgressDeadlineExceeded"},
		{"leader worker set", obj("LeaderWorkerSet.leaderworkerset.x-k8s.io", map[string]any{"spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"readyReplicas": int64(1)}}), "ok", "1/1 available"},
		{"a Knative Service, Ready", obj("Service.serving.knative.dev", map[string]any{"status": map[string]any{"conditions": []any{cond("Ready", "True", "")}}}), "ok", "Ready"},
		{"a refused Gateway", obj("Gateway.gateway.networking.k8s.io", map[string]any{"status": map[string]any{"conditions": []any{cond("Programmed", "False", "Invalid")}}}), "fail", "not Programmed: Invalid"},
		{"a route accepted by every parent", obj("HTTPRoute.gateway.networking.k8s.io", map[string]any{"status": map[string]any{"parents": []any{
			map[string]any{"conditions": []any{cond("Accepted", "True", "")}}}}}), "ok", "Accepted"},
		{"a route one parent refuses", obj("HTTPRoute.gateway.networking.k8s.io", map[string]any{"status": map[string]any{"parents": []any{
			map[string]any{"conditions": []any{cond("Accepted", "True", "")}},
			map[string]any{"conditions": []any{cond("Accepted", "False", "NotAllowedByListeners")}}}}}), "fail", "not Accepted: NotAllowedByListeners"},
		{"a route no parent answered", obj("HTTPRoute.gateway.networking.k8s.io", map[string]any{"status": map[string]any{}}), "wait", "not yet accepted"},
		{"a Service", obj("Service", map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.7"}}), "none", "ClusterIP 10.0.0.7"},
		{"a headless Service", obj("Service", map[string]any{"spec": map[string]any{"clusterIP": "None"}}), "none", "ClusterIP None"},
		{"an autoscaler", obj("HorizontalPodAutoscaler.autoscaling", map[string]any{"spec": map[string]any{"maxReplicas": int64(3)}, "status": map[string]any{"currentReplicas": int64(2)}}), "none", "2 replicas (1-3)"},
		{"an Ingress with an address", obj("Ingress.networking.k8s.io", map[string]any{"status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": "10.1.2.3"}}}}}), "ok", "at 10.1.2.3"},
		{"an Ingress without", obj("Ingress.networking.k8s.io", map[string]any{"status": map[string]any{}}), "none", "no address yet"},
		{"anything else", obj("ConfigMap", map[string]any{}), "none", "made"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, detail := childState(tt.u)
			assert.Equal(t, tt.state, state)
			assert.Equal(t, tt.detail, detail)
		})
	}
}
