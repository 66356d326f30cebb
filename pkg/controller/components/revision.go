package components

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Revision names what a predictor runs: its name and a digest of its pod
// and metadata, so it changes exactly when its pods would be replaced.
// canaryTrafficPercent in Standard mode compares it with the revision last
// rolled out.
func Revision(c *Component) string {
	data, err := json.Marshal(struct {
		Pod         any
		Labels      map[string]string
		Annotations map[string]string
	}{c.Pod, c.Labels, c.Annotations})
	if err != nil {
		// A pod that does not encode cannot be applied either; the apply
		// step reports it.
		return c.Name
	}
	sum := sha256.Sum256(data)
	return c.Name + "-" + hex.EncodeToString(sum[:5])
}

// LatestRevision is the component that runs predictor's latest revision
// as name, beside the last rolled-out one, for a share of the traffic:
// the same pod, labelled so that neither Service selects the other's pods.
func LatestRevision(predictor *Component, name string, percent int32, ready bool) *Component {
	c := *predictor
	c.Name = name
	value := string(v1beta1.PredictorComponent) + "-canary"
	c.Selector = maps.Clone(predictor.Selector)
	c.Selector[v1beta1.ComponentLabel] = value
	c.Labels = maps.Clone(predictor.Labels)
	c.Labels[v1beta1.ComponentLabel] = value
	c.Annotations = maps.Clone(predictor.Annotations)
	c.Pod = *predictor.Pod.DeepCopy()
	c.Extension = *predictor.Extension.DeepCopy()
	c.Split = &Split{Percent: percent, Ready: ready}
	return &c
}
