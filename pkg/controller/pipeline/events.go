package pipeline

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// RecordReadiness records an Event when an owner's Ready condition is news:
// it turned Ready (at url), or it stopped being Ready after it was. With
// failing, an owner that fails rather than merely rolls out also gets a
// Warning when the reason or message of its failure changes, so a user
// watching Events sees each new failure once and a rollout not at all.
func RecordReadiness(rec events.EventRecorder, obj runtime.Object, kind, url string, before, after []metav1.Condition, failing bool) {
	was := meta.FindStatusCondition(before, v1beta1.ConditionReady)
	now := meta.FindStatusCondition(after, v1beta1.ConditionReady)
	switch {
	case now == nil:
	case now.Status == metav1.ConditionTrue:
		if was == nil || was.Status != metav1.ConditionTrue {
			rec.Eventf(obj, nil, corev1.EventTypeNormal, v1beta1.EventReady, "Reconcile", "%s is Ready at %s", kind, url)
		}
	case was != nil && was.Status == metav1.ConditionTrue,
		failing && (was == nil || was.Reason != now.Reason || was.Message != now.Message):
		rec.Eventf(obj, nil, corev1.EventTypeWarning, v1beta1.EventNotReady, "Reconcile", "%s: %s", now.Reason, now.Message)
	}
}
