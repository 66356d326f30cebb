package inferenceservice

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// setKnativeStatus sets what Knative reports: each component's URL, its
// revisions and traffic, and IngressReady from the top-level Knative route.
// A revision counts as rolled out when it is ready and takes all traffic.
func setKnativeStatus(st *v1beta1.InferenceServiceStatus, s *scope, gen int64) {
	for _, c := range s.comps {
		obs := s.observed[c.Type]
		prev := s.isvc.Status.Components[c.Type]
		cs := st.Components[c.Type]
		if obs.URL != "" {
			cs.URL = obs.URL
		}
		cs.LatestReadyRevision, cs.LatestCreatedRevision, cs.Traffic = obs.LatestReadyRevision, obs.LatestCreatedRevision, obs.Traffic
		cs.LatestRolledoutRevision, cs.PreviousRolledoutRevision = prev.LatestRolledoutRevision, prev.PreviousRolledoutRevision
		if obs.RolledOut && allTrafficToLatest(obs.Traffic) && obs.LatestReadyRevision != prev.LatestRolledoutRevision {
			cs.PreviousRolledoutRevision = prev.LatestRolledoutRevision
			cs.LatestRolledoutRevision = obs.LatestReadyRevision
		}
		st.Components[c.Type] = cs
		if c.Type == s.plan.Top.Component && s.plan.External && obs.URL != "" {
			st.URL = obs.URL
		}
	}
	top := s.observed[s.plan.Top.Component]
	c := condition(v1beta1.ConditionIngressReady, true, "KnativeRoutes", "", gen)
	if top.URL == "" && s.plan.External {
		c = condition(v1beta1.ConditionIngressReady, false, "WaitingForKnativeRoute", "the Knative Service has no URL yet", gen)
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

func allTrafficToLatest(traffic []v1beta1.TrafficTarget) bool {
	for _, t := range traffic {
		if t.Percent != nil && *t.Percent > 0 && (t.LatestRevision == nil || !*t.LatestRevision) {
			return false
		}
	}
	return true
}
