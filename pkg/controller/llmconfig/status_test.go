package llmconfig

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// TestStatus: Ready from admission's checks of the stored preset;
// ConfigInUse naming the first users, or saying the deletion waits.
func TestStatus(t *testing.T) {
	users := func(n int) []v1alpha2.UntypedObjectReference {
		var out []v1alpha2.UntypedObjectReference
		for i := range n {
			out = append(out, v1alpha2.UntypedObjectReference{Namespace: "team", Name: fmt.Sprintf("%c%03d", 'a'+min(i, 25), i)})
		}
		return out
	}
	now := metav1.Now()
	tests := []struct {
		name                 string
		cfg                  v1alpha2.LLMInferenceServiceConfig
		users                []v1alpha2.UntypedObjectReference
		ready, inUse, inText string
		// listed is how many users referencedBy lists: all, up to the bound.
		listed int
	}{
		{name: "unused", ready: "True/Valid", inUse: "False/NotInUse", inText: "no LLMInferenceService"},
		{name: "used by two", users: users(2), ready: "True/Valid", inUse: "True/InUse", inText: "used by 2 LLMInferenceService(s): team/a000, team/b001", listed: 2},
		{name: "used by seven: five named", users: users(7), ready: "True/Valid", inUse: "True/InUse", inText: "team/e004, and 2 more", listed: 7},
		{name: "used by 250: a hundred listed, all counted", users: users(250), ready: "True/Valid", inUse: "True/InUse",
			inText: "used by 250 LLMInferenceService(s)", listed: MaxReferencedBy},
		{name: "deleted while in use", cfg: v1alpha2.LLMInferenceServiceConfig{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}},
			users: users(1), ready: "True/Valid", inUse: "True/DeletionBlocked", inText: "the deletion waits until no LLMInferenceService uses the preset; 1 do: team/a000", listed: 1},
		{name: "stored before admission refused baseRefs", cfg: v1alpha2.LLMInferenceServiceConfig{
			Spec: v1alpha2.LLMInferenceServiceSpec{BaseRefs: []corev1.LocalObjectReference{{Name: "other"}}}},
			ready: "False/InvalidSpec", inUse: "False/NotInUse"},
		{name: "undecodable", cfg: v1alpha2.LLMInferenceServiceConfig{DecodeError: "spec.replicas: not a number"},
			ready: "False/UndecodableSpec", inUse: "False/NotInUse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status(&tt.cfg, tt.users)
			get := func(typ string) *metav1.Condition { return meta.FindStatusCondition(st.Conditions, typ) }
			assert.Equal(t, tt.ready, string(get("Ready").Status)+"/"+get("Ready").Reason)
			assert.Equal(t, tt.inUse, string(get("ConfigInUse").Status)+"/"+get("ConfigInUse").Reason)
			assert.Contains(t, get("ConfigInUse").Message, tt.inText)
			if tt.listed == 0 {
				assert.Empty(t, st.ReferencedBy)
			} else {
				assert.Equal(t, tt.users[:tt.listed], st.ReferencedBy)
			}
		})
	}
}

// TestUses: a service uses the presets its status records as merged; before
// its first reconcile, those its baseRefs name, here or in Serval's
// namespace.
func TestUses(t *testing.T) {
	svc := &v1alpha2.LLMInferenceService{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "llama"},
		Spec: v1alpha2.LLMInferenceServiceSpec{BaseRefs: []corev1.LocalObjectReference{{Name: "tuned"}}}}
	assert.Equal(t, []string{"serval-system/tuned", "team/tuned"}, Uses(svc, "serval-system"))
	svc.Status.AppliedConfigRefs = []v1alpha2.AppliedConfigRef{
		{Namespace: "serval-system", Name: "serval-config-llm-template"}, {Namespace: "team", Name: "tuned"}}
	assert.Equal(t, []string{"serval-system/serval-config-llm-template", "team/tuned"}, Uses(svc, "serval-system"))
}
