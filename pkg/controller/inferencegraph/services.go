package inferencegraph

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// ServiceNames returns the InferenceServices a graph names, sorted, each once.
func ServiceNames(spec *v1alpha1.InferenceGraphSpec) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range spec.Nodes {
		for _, s := range n.Steps {
			if s.ServiceName != "" && !seen[s.ServiceName] {
				seen[s.ServiceName] = true
				names = append(names, s.ServiceName)
			}
		}
	}
	sort.Strings(names)
	return names
}

// PredictURL is where the router sends a step's request for an
// InferenceService, as KServe's router does: the InferenceService's
// cluster-local address and its model's predict path in the protocol it
// serves (v1 unless status says v2).
func PredictURL(isvc *v1beta1.InferenceService) string {
	base := isvc.Status.Address.URL
	switch isvc.Status.ProtocolVersion {
	case v1beta1.ProtocolV2, v1beta1.ProtocolGRPCV2:
		return base + "/v2/models/" + isvc.Name + "/infer"
	}
	return base + "/v1/models/" + isvc.Name + ":predict"
}

// resolveServices reads the InferenceServices the graph names: the URL of
// each that has an address, and which are not Ready, with why.
func (r *Reconciler) resolveServices(ctx context.Context, s *scope) (map[string]string, error) {
	urls := map[string]string{}
	for _, name := range ServiceNames(&s.ig.Spec) {
		isvc := &v1beta1.InferenceService{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.ig.Namespace, Name: name}, isvc)
		switch {
		case apierrors.IsNotFound(err):
			s.notReady = append(s.notReady, name+" (not found)")
			continue
		case err != nil:
			return nil, fmt.Errorf("get InferenceService %s: %w", name, err)
		}
		if isvc.Status.Address != nil && isvc.Status.Address.URL != "" {
			urls[name] = PredictURL(isvc)
		}
		ready := meta.FindStatusCondition(isvc.Status.Conditions, v1beta1.ConditionReady)
		switch {
		case ready == nil:
			s.notReady = append(s.notReady, name+" (not reconciled yet)")
		case ready.Status != metav1.ConditionTrue:
			s.notReady = append(s.notReady, fmt.Sprintf("%s (%s)", name, ready.Reason))
		}
	}
	return urls, nil
}
