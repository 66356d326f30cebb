package presets

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// dropEmptyArgs removes from rendered's containers the command and args
// items that a template made empty, as in KServe's presets, where
// '{{ if .GlobalConfig.EnableTLS }}--ssl-certfile ...{{ end }}' stands for
// a flag that is there only with TLS. An item written empty in the source
// stays: only what rendering emptied goes. source and rendered are the same
// spec before and after rendering, so their lists line up.
func dropEmptyArgs(source, rendered *v1alpha2.LLMInferenceServiceSpec) {
	for i, pods := range podSpecs(rendered) {
		src := podSpecs(source)[i]
		if pods == nil || src == nil {
			continue
		}
		for j := range pods.Containers {
			if j < len(src.Containers) {
				pods.Containers[j].Command = dropEmptied(src.Containers[j].Command, pods.Containers[j].Command)
				pods.Containers[j].Args = dropEmptied(src.Containers[j].Args, pods.Containers[j].Args)
			}
		}
	}
}

// podSpecs are the spec's pod templates, in a fixed order (nil where
// absent).
func podSpecs(s *v1alpha2.LLMInferenceServiceSpec) []*corev1.PodSpec {
	out := []*corev1.PodSpec{s.Template, s.Worker, nil, nil, nil, nil}
	if s.Prefill != nil {
		out[2], out[3] = s.Prefill.Template, s.Prefill.Worker
	}
	if r := s.Router; r != nil && r.Scheduler != nil {
		out[4] = r.Scheduler.Template
		if r.Scheduler.Tokenizer != nil {
			out[5] = r.Scheduler.Tokenizer.Template
		}
	}
	return out
}

func dropEmptied(source, rendered []string) []string {
	if len(source) != len(rendered) {
		return rendered
	}
	out := rendered[:0]
	for i, item := range rendered {
		if item == "" && source[i] != "" {
			continue
		}
		out = append(out, item)
	}
	return out
}
