package workload_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/internal/golden"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/workload/standard"
)

// TestCanaryGolden renders the Standard-mode objects of a predictor with
// a ready canary of spec.canary (the stable one's minimum lowered by the
// canary's replica), and of canaryTrafficPercent's latest revision.
func TestCanaryGolden(t *testing.T) {
	isvc := custom("split", nil, func(s *v1beta1.InferenceServiceSpec) {
		s.Predictor.MinReplicas, s.Predictor.MaxReplicas = ptr.To[int32](4), 8
		s.Canary = []v1beta1.CanarySpec{{TrafficPercent: 20, Predictor: v1beta1.PredictorSpec{Name: "v2",
			PodSpec: v1beta1.PodSpec{Containers: []corev1.Container{{Name: "kserve-container", Image: "example.com/model:2"}}}}}}
	})
	comps, err := components.Build(components.Inputs{ISVC: isvc, Config: config.Default(), Mode: v1beta1.Standard,
		ReadyCanaries: map[string]bool{"split-v2-predictor": true}})
	require.NoError(t, err)
	require.Len(t, comps, 2)
	assert.Equal(t, int32(3), *comps[0].Extension.MinReplicas, "4, less the ready canary's replica")
	assert.Equal(t, &components.Split{Canary: "v2", Percent: 20, Ready: true}, comps[1].Split)
	golden.Check(t, "standard-canary", renderAll(t, comps...))

	latest := components.LatestRevision(comps[0], v1beta1.CanaryRevisionName("split"), 30, false)
	golden.Check(t, "standard-canary-revision", renderAll(t, latest))
}

func renderAll(t *testing.T, comps ...*components.Component) []byte {
	t.Helper()
	var all []apply.Object
	for _, c := range comps {
		objs, err := standard.Mode{}.Objects(c)
		require.NoError(t, err)
		all = append(all, objs...)
	}
	return golden.Objects(t, all)
}
