package presets

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

func TestArgumentsThatRenderEmptyAreDropped(t *testing.T) {
	container := func(command, args []string) *corev1.PodSpec {
		return &corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Command: command, Args: args}}}
	}
	tlsArgs := []string{"--port", "8000", "{{ if .GlobalConfig.EnableTLS }}--ssl-certfile=/tls/tls.crt{{ end }}", "", "--x"}
	spec := v1alpha2.LLMInferenceServiceSpec{
		WorkloadSpec: v1alpha2.WorkloadSpec{Template: container([]string{"{{ if .GlobalConfig.EnableTLS }}tls-wrapper{{ end }}", "vllm"}, tlsArgs)},
		Router:       &v1alpha2.RouterSpec{Scheduler: &v1alpha2.SchedulerSpec{Template: container(nil, tlsArgs)}},
	}
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team"}}
	for _, c := range []struct {
		tls           bool
		command, args []string
	}{
		{false, []string{"vllm"}, []string{"--port", "8000", "", "--x"}},
		{true, []string{"tls-wrapper", "vllm"}, []string{"--port", "8000", "--ssl-certfile=/tls/tls.crt", "", "--x"}},
	} {
		got, err := render(spec, templateData(svc, Global{EnableTLS: c.tls}, "llama-inference-pool"), "test", strtemplate.Limits{})
		require.NoError(t, err)
		assert.Equal(t, c.command, got.Template.Containers[0].Command, "TLS %v", c.tls)
		assert.Equal(t, c.args, got.Template.Containers[0].Args, "TLS %v: an item written empty stays", c.tls)
		assert.Equal(t, c.args, got.Router.Scheduler.Template.Containers[0].Args, "TLS %v: the picker's too", c.tls)
	}
}
