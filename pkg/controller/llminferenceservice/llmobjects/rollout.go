package llmobjects

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// deploymentStrategy is a Deployment's rolling update of rolloutStrategy;
// nil (Kubernetes' 25%/25%) when it sets neither bound. A bound left out
// takes Kubernetes' default.
func deploymentStrategy(r *v1alpha2.RolloutStrategy) *appsv1.DeploymentStrategy {
	if r == nil || (r.MaxSurge == nil && r.MaxUnavailable == nil) {
		return nil
	}
	return &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: r.MaxSurge, MaxUnavailable: r.MaxUnavailable}}
}

// lwsRollingUpdate is a LeaderWorkerSet's rollingUpdateConfiguration of
// rolloutStrategy, KServe's rule: nil (LeaderWorkerSet's 1 unavailable, no
// surge) when it sets neither bound; a bound left out takes that default.
func lwsRollingUpdate(r *v1alpha2.RolloutStrategy) map[string]any {
	if r == nil || (r.MaxSurge == nil && r.MaxUnavailable == nil) {
		return nil
	}
	unavailable, surge := intstr.FromInt32(1), intstr.FromInt32(0)
	if r.MaxUnavailable != nil {
		unavailable = *r.MaxUnavailable
	}
	if r.MaxSurge != nil {
		surge = *r.MaxSurge
	}
	return map[string]any{"maxUnavailable": intOrString(unavailable), "maxSurge": intOrString(surge)}
}

// intOrString is an IntOrString as Unstructured holds it.
func intOrString(v intstr.IntOrString) any {
	if v.Type == intstr.Int {
		return int64(v.IntVal)
	}
	return v.StrVal
}
