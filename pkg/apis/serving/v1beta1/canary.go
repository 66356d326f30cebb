package v1beta1

import (
	"encoding/json"
	"fmt"
	"math"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// PredictorChildName is the name of a predictor's Deployment and Service:
// {isvc}-predictor, or {isvc}-{name}-predictor for a named one (a canary,
// or a stable predictor that was one).
func PredictorChildName(isvcName, predictorName string) string {
	if predictorName == "" {
		return ChildName(isvcName, PredictorComponent)
	}
	return isvcName + "-" + predictorName + "-" + string(PredictorComponent)
}

// CanaryRevisionName is the Deployment and Service of the latest revision
// while canaryTrafficPercent splits a Standard-mode predictor's traffic:
// {isvc}-predictor-canary, KServe's canary name.
func CanaryRevisionName(isvcName string) string {
	return ChildName(isvcName, PredictorComponent) + "-canary"
}

// CanaryPredictor is canary i's predictor as it runs: the stable predictor
// with the canary entry's fields over it (a field the entry sets replaces
// the stable one's; maps merge key by key), without autoscaling, at its
// fixed replicas. Both predictors are expected to be defaulted.
func (s *InferenceServiceSpec) CanaryPredictor(i int) (PredictorSpec, error) {
	c := &s.Canary[i]
	var merged PredictorSpec
	if err := overlay(&s.Predictor, &c.Predictor, &merged); err != nil {
		return merged, fmt.Errorf("canary %q: %w", c.Predictor.Name, err)
	}
	merged.Name = c.Predictor.Name
	merged.MaxReplicas = 0
	merged.ScaleTarget, merged.ScaleMetric, merged.ScaleMetricType, merged.AutoScaling = nil, nil, nil, nil
	merged.CanaryTrafficPercent = nil
	replicas := s.CanaryReplicas(i)
	merged.MinReplicas = &replicas
	return merged, nil
}

// CanaryReplicas is canary i's fixed replica count, as KServe counts it:
// its minReplicas when set, else the stable predictor's minReplicas (1 when
// unset) times its traffic share, rounded up.
func (s *InferenceServiceSpec) CanaryReplicas(i int) int32 {
	c := &s.Canary[i]
	if c.Predictor.MinReplicas != nil {
		return *c.Predictor.MinReplicas
	}
	return int32(math.Ceil(float64(s.stableMinReplicas()) * float64(c.TrafficPercent) / 100))
}

func (s *InferenceServiceSpec) stableMinReplicas() int32 {
	if m := s.Predictor.MinReplicas; m != nil {
		return *m
	}
	return 1
}

// StableMinReplicas is the stable predictor's minReplicas with the
// replicas of the ready canaries taken off (at least 1), as KServe lowers
// it: the canaries serve their share of the traffic, so the stable one
// needs fewer. Unchanged while no canary is ready, or when minReplicas is
// unset. ready says whether canary i is ready.
func (s *InferenceServiceSpec) StableMinReplicas(ready func(i int) bool) *int32 {
	m := s.Predictor.MinReplicas
	if m == nil || len(s.Canary) == 0 {
		return m
	}
	var taken int32
	for i := range s.Canary {
		if ready(i) {
			taken += s.CanaryReplicas(i)
		}
	}
	if taken == 0 {
		return m
	}
	adjusted := max(*m-taken, 1)
	return &adjusted
}

// overlay writes to out base with over's set fields over it, as a JSON
// merge patch (RFC 7386): objects merge key by key, anything else (a list,
// a value) is replaced. Fields over leaves unset (omitted in JSON) keep
// base's values.
func overlay(base, over, out any) error {
	b, err := json.Marshal(base)
	if err != nil {
		return err
	}
	o, err := json.Marshal(over)
	if err != nil {
		return err
	}
	merged, err := jsonpatch.MergePatch(b, o)
	if err != nil {
		return err
	}
	return json.Unmarshal(merged, out)
}
