package inferencegraph_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/controller/inferencegraph"
)

// TestGraphTooLargeForTheRouter: a graph within admission's bound on its
// own size whose InferenceServices resolve to long URLs would pass the
// argument length Linux lets a process start with: Build refuses it, naming
// both sizes, instead of making a router that cannot start.
func TestGraphTooLargeForTheRouter(t *testing.T) {
	var steps []v1alpha1.InferenceStep
	urls := map[string]string{}
	for i := range 1000 {
		name := fmt.Sprintf("m%d", i)
		steps = append(steps, v1alpha1.InferenceStep{InferenceTarget: v1alpha1.InferenceTarget{ServiceName: name}})
		urls[name] = "http://" + name + "-predictor.a-team-namespace-of-some-length.svc.cluster.local/v2/models/" + name + strings.Repeat("x", 60) + "/infer"
	}
	ig := &v1alpha1.InferenceGraph{ObjectMeta: metav1.ObjectMeta{Name: "wide", Namespace: "team", UID: "u"},
		Spec: v1alpha1.InferenceGraphSpec{Nodes: map[string]v1alpha1.InferenceRouter{"root": {RouterType: v1alpha1.Ensemble, Steps: steps}}}}
	raw, err := json.Marshal(ig.Spec.Nodes)
	require.NoError(t, err)
	require.Less(t, len(raw), v1alpha1.MaxGraphBytes, "admission lets the graph in")

	_, err = inferencegraph.Build(inferencegraph.Inputs{Graph: ig, Mode: v1beta1.Standard, URLs: urls, Router: config.Default().Router, DefaultImage: "router:v1"})
	var tooLarge *inferencegraph.GraphTooLargeError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	assert.Greater(t, tooLarge.Bytes, inferencegraph.MaxGraphArgBytes)
	assert.Contains(t, err.Error(), "which Linux caps at 131058 bytes")

	// With short URLs the same graph fits.
	for name := range urls {
		urls[name] = "http://" + name
	}
	_, err = inferencegraph.Build(inferencegraph.Inputs{Graph: ig, Mode: v1beta1.Standard, URLs: urls, Router: config.Default().Router, DefaultImage: "router:v1"})
	assert.NoError(t, err)
}
