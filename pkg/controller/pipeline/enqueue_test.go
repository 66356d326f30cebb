package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
)

func TestResult(t *testing.T) {
	rejected := apply.Failure{Err: apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "x", nil)}
	transient := apply.Failure{Err: errors.New("connection refused")}
	tests := []struct {
		name    string
		out     Outcome
		err     error
		want    ctrl.Result
		wantErr bool
	}{
		{name: "nothing to retry", out: Outcome{}},
		{name: "a rejection waits for a change", out: Outcome{ApplyFailures: map[v1beta1.ComponentType]apply.Failure{"predictor": rejected}}},
		{name: "a transient failure is retried with backoff", out: Outcome{ApplyFailures: map[v1beta1.ComponentType]apply.Failure{"": transient}}, wantErr: true},
		{name: "a stale read is retried quietly", out: Outcome{Stale: true, ApplyFailures: map[v1beta1.ComponentType]apply.Failure{}}, want: ctrl.Result{RequeueAfter: StaleRetryInterval}},
		{name: "an error wins over a stale read", out: Outcome{Stale: true}, err: errors.New("read failed"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.out.Result(tt.err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantErr, err != nil, "%v", err)
		})
	}
}

func TestByOwnerLabel(t *testing.T) {
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"owner": "svc"}}}
	f := ByOwnerLabel("owner")
	assert.Empty(t, f(context.Background(), &metav1.PartialObjectMetadata{}), "an object without the label belongs to no owner")
	got := f(context.Background(), pod)
	assert.Len(t, got, 1)
	assert.Equal(t, "ns/svc", got[0].String())
}
