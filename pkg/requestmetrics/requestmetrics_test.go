package requestmetrics

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		method, path   string
		watch          bool
		verb, resource string
	}{
		{http.MethodGet, "/api/v1/namespaces/ns/pods", false, "list", "pods"},
		{http.MethodGet, "/api/v1/namespaces/ns/pods", true, "watch", "pods"},
		{http.MethodGet, "/api/v1/pods", false, "list", "pods"},
		{http.MethodGet, "/api/v1/namespaces/ns/secrets/storage-config", false, "get", "secrets"},
		{http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/iris-predictor", false, "patch", "deployments"},
		{http.MethodPatch, "/apis/serving.serval.dev/v1beta1/namespaces/ns/inferenceservices/iris/status", false, "patch", "inferenceservices/status"},
		{http.MethodPost, "/apis/events.k8s.io/v1/namespaces/ns/events", false, "create", "events"},
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/serval-system/leases/serval", false, "update", "leases"},
		{http.MethodDelete, "/api/v1/namespaces/ns/services/x", false, "delete", "services"},
		{http.MethodDelete, "/api/v1/namespaces/ns/services", false, "deletecollection", "services"},
		{http.MethodGet, "/api/v1/namespaces/ns", false, "get", "namespaces"},
		{http.MethodGet, "/api/v1/namespaces", false, "list", "namespaces"},
		{http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x", false, "get", "customresourcedefinitions"},
		{http.MethodGet, "/apis", false, "list", ""},
		{http.MethodGet, "/api/v1", false, "list", ""},
		{http.MethodGet, "/healthz", false, "list", ""},
	}
	for _, tt := range tests {
		verb, resource := Classify(tt.method, tt.path, tt.watch)
		assert.Equal(t, tt.verb+" "+tt.resource, verb+" "+resource, "%s %s", tt.method, tt.path)
	}
}
