package inferenceservice

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// setCanaryStatus reports the canaries of spec.canary (canaryStatuses and
// CanaryPredictorReady, as KServe reports them) and, in Standard mode, the
// predictor's revisions: the one last rolled out, and while
// canaryTrafficPercent splits the traffic, the latest and the split.
func setCanaryStatus(st *v1beta1.InferenceServiceStatus, s *scope, gen int64) {
	setCanaryStatuses(st, s, gen)
	if s.mode != v1beta1.Standard || s.revision == "" {
		return
	}
	cs := st.Components[v1beta1.PredictorComponent]
	cs.LatestRolledoutRevision = s.history.Components[v1beta1.PredictorComponent].LatestRolledoutRevision
	obs := s.out.Observed[v1beta1.PredictorComponent]
	if !s.holdPredictor && obs.RolledOut && obs.AppliedHash != "" && obs.AppliedHash == s.predictorHash {
		// Every replica runs what this reconcile rendered.
		cs.LatestRolledoutRevision = s.revision
	}
	if percent := s.defaulted.Spec.Predictor.CanaryTrafficPercent; percent != nil {
		cs.LatestCreatedRevision = s.revision
		cs.Traffic = revisionTraffic(s, cs.LatestRolledoutRevision, int64(*percent))
	}
	st.Components[v1beta1.PredictorComponent] = cs
}

// revisionTraffic is how the predictor's traffic is split between the
// revision last rolled out and the latest one.
func revisionTraffic(s *scope, rolledOut string, percent int64) []v1beta1.TrafficTarget {
	latest := v1beta1.TrafficTarget{RevisionName: s.revision, LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}
	if !s.holdPredictor || rolledOut == "" {
		return []v1beta1.TrafficTarget{latest}
	}
	share := int64(0)
	for _, c := range s.splits {
		if c.Split.Canary == "" && c.Split.Ready {
			share = percent
		}
	}
	latest.Percent = ptr.To(share)
	previous := v1beta1.TrafficTarget{RevisionName: rolledOut, LatestRevision: ptr.To(false), Percent: ptr.To(100 - share)}
	return []v1beta1.TrafficTarget{previous, latest}
}

// setCanaryStatuses lists each canary of spec.canary, in its order, with
// its readiness, share and model, and sets CanaryPredictorReady; both go
// when the spec has no canary.
func setCanaryStatuses(st *v1beta1.InferenceServiceStatus, s *scope, gen int64) {
	canaries := s.defaulted.Spec.Canary
	if len(canaries) == 0 || s.mode != v1beta1.Standard {
		st.CanaryStatuses = nil
		meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionCanaryPredictorReady)
		return
	}
	st.CanaryStatuses = make([]v1beta1.CanaryStatus, 0, len(canaries))
	var notReady []string
	for _, c := range canaries {
		name := v1beta1.PredictorChildName(s.isvc.Name, c.Predictor.Name)
		obs := s.out.Splits[name]
		var model v1beta1.InferenceServiceStatus
		setModelStatus(&model, obs)
		st.CanaryStatuses = append(st.CanaryStatuses, v1beta1.CanaryStatus{
			Name: c.Predictor.Name, Ready: obs.Available, TrafficPercent: c.TrafficPercent, ModelStatus: model.ModelStatus,
		})
		if !obs.Available {
			why := obs.NotAvailableMessage
			if obs.Problem != nil {
				why = obs.Problem.String()
			}
			if why == "" {
				why = "no available replica"
			}
			notReady = append(notReady, c.Predictor.Name+": "+why)
		}
	}
	if len(notReady) > 0 {
		meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionCanaryPredictorReady, false, v1beta1.ReasonCanariesNotReady,
			"not ready, so without traffic: "+strings.Join(notReady, "; "), gen))
		return
	}
	meta.SetStatusCondition(&st.Conditions, condition(v1beta1.ConditionCanaryPredictorReady, true, v1beta1.ReasonAllCanariesReady, "", gen))
}
