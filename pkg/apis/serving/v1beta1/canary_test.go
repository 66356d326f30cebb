package v1beta1

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// withCanary adds a canary entry serving another model.
func withCanary(name string, percent int32, f ...func(p *PredictorSpec)) option {
	return func(i *InferenceService) {
		c := CanarySpec{TrafficPercent: percent, Predictor: PredictorSpec{Name: name, Model: &ModelSpec{
			ModelFormat:            ModelFormat{Name: "sklearn"},
			PredictorExtensionSpec: PredictorExtensionSpec{StorageURI: ptr.To("gs://models/iris-" + name)},
		}}}
		for _, g := range f {
			g(&c.Predictor)
		}
		i.Spec.Canary = append(i.Spec.Canary, c)
	}
}

// manyCanaries is n canaries with the same (bad) name.
func manyCanaries(n int) []option {
	opts := make([]option, n)
	for i := range opts {
		opts[i] = withCanary("", 0)
	}
	return opts
}

func TestValidateCanaries(t *testing.T) {
	tests := []struct {
		name string
		isvc *InferenceService
		mode DeploymentMode
		want []string
	}{
		{name: "one canary", isvc: makeISVC(withCanary("v2", 20))},
		{name: "two canaries, dark launch", isvc: makeISVC(withCanary("v2", 0), withCanary("v3", 100))},
		{name: "Knative mode", mode: Knative, isvc: makeISVC(withCanary("v2", 20)),
			want: []string{"spec.canary: Forbidden: spec.canary needs Standard mode"}},
		{name: "custom stable predictor", isvc: makeISVC(withPredictor(func(p *PredictorSpec) {
			p.Model = nil
			p.Containers = []corev1.Container{{Name: "kserve-container", Image: "me/model:1"}}
		}), withCanary("v2", 20)), want: []string{"spec.canary needs a stable predictor with a model"}},
		{name: "with canaryTrafficPercent", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](10) }),
			withCanary("v2", 20)), want: []string{"spec.predictor.canaryTrafficPercent: Forbidden: canaryTrafficPercent and spec.canary are two ways"}},
		{name: "no name", isvc: makeISVC(withCanary("", 20)),
			want: []string{"spec.canary[0].predictor.name: Required value: a canary needs a name"}},
		{name: "bad name", isvc: makeISVC(withCanary("V2", 20)),
			want: []string{`spec.canary[0].predictor.name: Invalid value: "V2": a DNS-1035 label`}},
		{name: "name too long", isvc: makeISVC(withCanary(strings.Repeat("v", 49), 20)),
			want: []string{"would be 64 characters"}},
		{name: "duplicate name", isvc: makeISVC(withCanary("v2", 10), withCanary("v2", 10)),
			want: []string{`spec.canary[1].predictor.name: Duplicate value: "v2"`}},
		{name: "the stable name", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.Name = "v1" }), withCanary("v1", 10)),
			want: []string{"is the stable predictor's name"}},
		{name: "past the bound, refused alone", isvc: makeISVC(manyCanaries(10000)...),
			want: []string{"spec.canary: Too many: 10000: must have at most 16 items"}},
		{name: "over 100 in all", isvc: makeISVC(withCanary("v2", 60), withCanary("v3", 50)),
			want: []string{"spec.canary: Invalid value: 110: the canaries' trafficPercent add up to 110; at most 100"}},
		{name: "no implementation", isvc: makeISVC(withCanary("v2", 20, func(p *PredictorSpec) { p.Model = nil })),
			want: []string{"spec.canary[0].predictor: Required value: the predictor needs exactly one of model"}},
		{name: "autoscaling", isvc: makeISVC(withCanary("v2", 20, func(p *PredictorSpec) {
			p.MaxReplicas = 3
			p.ScaleTarget = ptr.To[int32](50)
			p.ScaleMetric = ptr.To(ScaleMetricCPU)
		})), want: []string{"spec.canary[0].predictor.maxReplicas: Forbidden: a canary runs fixed replicas",
			"spec.canary[0].predictor.scaleTarget: Forbidden", "spec.canary[0].predictor.scaleMetric: Forbidden"}},
		{name: "minReplicas over the stable one's", isvc: makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](2) }),
			withCanary("v2", 20, func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](3) })),
			want: []string{"spec.canary[0].predictor.minReplicas: Invalid value: 3: must not exceed the stable predictor's minReplicas (2)"}},
		{name: "a canary's own canaryTrafficPercent", isvc: makeISVC(withCanary("v2", 20, func(p *PredictorSpec) { p.CanaryTrafficPercent = ptr.To[int64](5) })),
			want: []string{"spec.canary[0].predictor.canaryTrafficPercent: Forbidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Default(tt.isvc)
			errs := Validate(tt.isvc, ValidationOptions{DefaultDeploymentMode: orStandard(tt.mode)})
			require.Len(t, errs, len(tt.want), "%v", errs)
			for i, w := range tt.want {
				assert.Contains(t, errs[i].Error(), w)
			}
		})
	}
}

func orStandard(m DeploymentMode) DeploymentMode {
	if m == "" {
		return Standard
	}
	return m
}

func TestCanaryPredictor(t *testing.T) {
	isvc := makeISVC(withPredictor(func(p *PredictorSpec) {
		p.MinReplicas = ptr.To[int32](4)
		p.MaxReplicas = 8
		p.Labels = map[string]string{"team": "a", "tier": "gold"}
		p.Model.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resourceOne}}
	}), withCanary("v2", 30, func(p *PredictorSpec) { p.Labels = map[string]string{"tier": "canary"} }))
	Default(isvc)
	got, err := isvc.Spec.CanaryPredictor(0)
	require.NoError(t, err)
	assert.Equal(t, "v2", got.Name)
	assert.Equal(t, "gs://models/iris-v2", *got.Model.StorageURI, "the canary's model")
	assert.Equal(t, "sklearn", got.Model.ModelFormat.Name)
	assert.Equal(t, resourceOne, got.Model.Resources.Limits[corev1.ResourceCPU], "the stable one's resources, which the canary leaves unset")
	assert.Equal(t, map[string]string{"team": "a", "tier": "canary"}, got.Labels, "labels merge key by key")
	assert.Equal(t, int32(2), *got.MinReplicas, "ceil(4 × 30%)")
	assert.Zero(t, got.MaxReplicas, "no autoscaling")
	assert.Equal(t, "iris-v2-predictor", PredictorChildName("iris", got.Name))
	assert.Equal(t, "iris-predictor", PredictorChildName("iris", ""))
	assert.Equal(t, "iris-predictor-canary", CanaryRevisionName("iris"))
}

func TestCanaryReplicas(t *testing.T) {
	tests := []struct {
		name      string
		stableMin *int32
		canaryMin *int32
		percent   int32
		want      int32
	}{
		{"the stable default, any share", nil, nil, 20, 1},
		{"a dark launch", nil, nil, 0, 0},
		{"rounded up", ptr.To[int32](3), nil, 50, 2},
		{"its own minReplicas", ptr.To[int32](3), ptr.To[int32](1), 90, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isvc := makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = tt.stableMin }),
				withCanary("v2", tt.percent, func(p *PredictorSpec) { p.MinReplicas = tt.canaryMin }))
			assert.Equal(t, tt.want, isvc.Spec.CanaryReplicas(0))
		})
	}
}

func TestStableMinReplicas(t *testing.T) {
	isvc := makeISVC(withPredictor(func(p *PredictorSpec) { p.MinReplicas = ptr.To[int32](4) }),
		withCanary("v2", 50), withCanary("v3", 25))
	none := func(int) bool { return false }
	all := func(int) bool { return true }
	assert.Equal(t, int32(4), *isvc.Spec.StableMinReplicas(none), "no canary ready: the stable keeps its minimum")
	assert.Equal(t, int32(1), *isvc.Spec.StableMinReplicas(all), "4 - 2 - 1, at least 1")
	assert.Equal(t, int32(2), *isvc.Spec.StableMinReplicas(func(i int) bool { return i == 0 }))
	unset := makeISVC(withCanary("v2", 50))
	assert.Nil(t, unset.Spec.StableMinReplicas(all), "an unset minReplicas stays unset")
}

var resourceOne = resource.MustParse("1")
