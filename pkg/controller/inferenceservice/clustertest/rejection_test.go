package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// TestRejectedChildrenBecomeStatus: mistakes the webhook (bypassed here)
// would have caught, or that only the API server knows, reach the status:
// the component's condition carries the API server's message, an Event says
// it too, what can be applied is, and nothing is retried in a loop.
func TestRejectedChildrenBecomeStatus(t *testing.T) {
	createClusterRuntime(t, "reject-sklearn", "sklearn-reject")
	withContainer := func(c corev1.Container) isvcOption {
		return withPredictor(func(p *v1beta1.PredictorSpec) { p.Containers = []corev1.Container{c} })
	}
	tests := []struct {
		name, reason string
		opt          isvcOption
		want         string
	}{
		// Caught by Serval's own validation, which the reconciler applies too.
		{"percent", string(v1beta1.InvalidPredictorSpec), withPredictor(func(p *v1beta1.PredictorSpec) {
			p.DeploymentStrategy = &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("0"))}}
		}), `spec.predictor.deploymentStrategy.rollingUpdate.maxUnavailable: Invalid value: "0": must be a count (0, 1, ...) or a percent`},
		{"container-name", string(v1beta1.InvalidPredictorSpec), withContainer(corev1.Container{Name: "Bad_Name!", Image: "example.com/sidecar:1"}),
			`spec.predictor.containers[0].name: Invalid value: "Bad_Name!"`},
		// Only the API server knows these.
		{"request-over-limit", "ApplyRejected", withPredictor(func(p *v1beta1.PredictorSpec) {
			p.Model.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}), "must be less than or equal to cpu limit"},
		{"negative-gpu", "ApplyRejected", withPredictor(func(p *v1beta1.PredictorSpec) {
			p.Model.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("-1")}}
		}), "must be greater than or equal to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			createISVC(t, ns, tt.name, "sklearn-reject", tt.opt)
			eventually(t, "the reason in PredictorReady", func() bool {
				return hasCondition(getISVC(t, ns, tt.name), v1beta1.ConditionPredictorReady, metav1.ConditionFalse, tt.reason)
			})
			isvc := getISVC(t, ns, tt.name)
			msg := cond(isvc, v1beta1.ConditionPredictorReady).Message
			assert.Contains(t, msg, tt.want)
			assert.True(t, hasCondition(isvc, v1beta1.ConditionReady, metav1.ConditionFalse, ""))
			assert.Contains(t, cond(isvc, v1beta1.ConditionReady).Message, tt.want, "Ready says why")
			if tt.reason == "ApplyRejected" {
				assert.Contains(t, msg, "the API server refused Deployment "+ns+"/"+tt.name+"-predictor: ")
				assert.Equal(t, "ApplyRejected", cond(isvc, v1beta1.ConditionLatestDeploymentReady).Reason)
				assert.True(t, exists(&corev1.Service{}, ns, tt.name+"-predictor"), "what can be applied is")
			}
			eventually(t, "the Event", func() bool {
				events := &eventsv1.EventList{}
				require.NoError(t, k8s.List(context.Background(), events, client.InNamespace(ns)))
				for _, e := range events.Items {
					if (e.Reason == tt.reason || e.Reason == "NotReady") && strings.Contains(e.Note, tt.want) {
						return true
					}
				}
				return false
			})
			quiesce(t, ns)
			noReconcileStorm(t, ns, tt.name, 2*time.Second, 1)
		})
	}
}
