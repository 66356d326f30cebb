package llminferenceservice

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/controller/llminferenceservice/children"
)

// TestClusterLocalURLFollowsTLS: without a Gateway or Ingress address, the
// URL is the workload Service's, https when the model serves TLS.
func TestClusterLocalURLFollowsTLS(t *testing.T) {
	for _, c := range []struct {
		tls  bool
		want string
	}{
		{false, "http://llama-kserve-workload-svc.team.svc.cluster.local:8000"},
		{true, "https://llama-kserve-workload-svc.team.svc.cluster.local:8000"},
	} {
		s := newScope(&v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}})
		s.inputs = children.Inputs{TLS: c.tls}
		st := &v1alpha2.LLMInferenceServiceStatus{}
		setAddresses(st, s)
		assert.Equal(t, c.want, st.URL)
		assert.Equal(t, "cluster-local", st.Addresses[0].Name)
	}
}
