package apply

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFailureKinds(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		name             string
		err              error
		reason           string
		permanent, stale bool
		messageMentions  string
	}{
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "x", nil), ReasonRejected, true, false, "the API server refused"},
		{"bad request", apierrors.NewBadRequest("nope"), ReasonRejected, true, false, "nope"},
		{"forbidden", apierrors.NewForbidden(deployments, "x", errors.New("policy")), ReasonForbidden, false, false, "policy"},
		{"stale read", fmt.Errorf("apply: %w", apierrors.NewConflict(deployments, "x", errors.New("modified"))), ReasonFailed, false, true, "modified"},
		{"timeout", apierrors.NewTimeoutError("slow webhook", 1), ReasonFailed, false, false, "slow webhook"},
		{"not an API error", errors.New("connection refused"), ReasonFailed, false, false, "applying"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Failure{Err: tc.err}
			assert.Equal(t, tc.reason, f.Reason())
			assert.Equal(t, tc.permanent, f.Permanent())
			assert.Equal(t, tc.stale, f.Stale())
			assert.Contains(t, f.Message(), tc.messageMentions)
		})
	}
}
