package owner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestIndex(t *testing.T) {
	labelled := func(labels map[string]string) client.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	isvc := Ref{Kind: "InferenceService", Name: "twin"}
	graph := Ref{Kind: "InferenceGraph", Name: "twin"}
	assert.Equal(t, []string{isvc.Key()}, IndexValue(labelled(map[string]string{"serving.serval.dev/inferenceservice": "twin"})))
	assert.Equal(t, []string{graph.Key()}, IndexValue(labelled(map[string]string{"serving.serval.dev/inferencegraph": "twin"})))
	assert.NotEqual(t, isvc.Key(), graph.Key(), "owners of the same name and different kinds never share an index value")
	assert.Empty(t, IndexValue(labelled(map[string]string{"app": "twin"})), "an object of no owner is not indexed")
	assert.Equal(t, "", Ref{Kind: "Pod"}.Label(), "a kind that owns nothing has no label")
}
