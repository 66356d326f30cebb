package llmconfig

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// usersIndex indexes LLMInferenceServices by the presets they use, as
// "namespace/name".
const usersIndex = "llmconfig.uses"

// Uses are the presets a service uses, as "namespace/name": those its
// status lists as merged, the record of its last reconcile. A service not
// reconciled yet (or stopped before it was) uses the presets its
// baseRefs name, in its namespace or in Serval's (system).
func Uses(svc *v1alpha2.LLMInferenceService, system string) []string {
	var out []string
	for _, ref := range svc.Status.AppliedConfigRefs {
		out = append(out, key(ref.Namespace, ref.Name))
	}
	if len(out) == 0 {
		for _, ref := range svc.Spec.BaseRefs {
			out = append(out, key(svc.Namespace, ref.Name), key(system, ref.Name))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func key(namespace, name string) string { return namespace + "/" + name }

// users are the services that use the preset, sorted by namespace and
// name. The list comes from the index and is only read.
func (r *Reconciler) users(ctx context.Context, cfg *v1alpha2.LLMInferenceServiceConfig) ([]v1alpha2.UntypedObjectReference, error) {
	list := &v1alpha2.LLMInferenceServiceList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{usersIndex: key(cfg.Namespace, cfg.Name)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the services that use LLMInferenceServiceConfig %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	out := make([]v1alpha2.UntypedObjectReference, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, v1alpha2.UntypedObjectReference{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name})
	}
	slices.SortFunc(out, func(a, b v1alpha2.UntypedObjectReference) int {
		return strings.Compare(key(a.Namespace, a.Name), key(b.Namespace, b.Name))
	})
	return out, nil
}

// maxNamed is how many services a message names; the status lists them
// all.
const maxNamed = 5

// named names the first services of refs, and how many more there are.
func named(refs []v1alpha2.UntypedObjectReference) string {
	var names []string
	for i, ref := range refs {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(refs)-maxNamed))
			break
		}
		names = append(names, key(ref.Namespace, ref.Name))
	}
	return strings.Join(names, ", ")
}

// presetsOf are the presets a service's change may concern: those it uses
// now, and by the watch of its old version, those it used before.
func (r *Reconciler) presetsOf(svc *v1alpha2.LLMInferenceService) []types.NamespacedName {
	var out []types.NamespacedName
	for _, k := range Uses(svc, r.Namespace) {
		ns, name, _ := strings.Cut(k, "/")
		out = append(out, types.NamespacedName{Namespace: ns, Name: name})
	}
	return out
}
