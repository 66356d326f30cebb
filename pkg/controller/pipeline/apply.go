package pipeline

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/owner"
)

// apply applies out.Objects, records what the API server refused (a
// conflict ends up in out.Failure, the rest in out.ApplyFailures by
// out.ProducedBy), and prunes the owner's children that are no longer
// desired, and those the producers' own prune scopes find. It returns the
// reader to observe through: the cache, plus what was just created (which
// the cache has not seen yet).
func (p *Pipeline) apply(ctx context.Context, o Owner, producers []Producer, out *Outcome) (client.Reader, error) {
	result := p.Applier.Apply(ctx, o.Ref.UID, out.Objects)
	reader := apply.NewFreshReader(p.Client, result.Created)
	for _, f := range result.Failures {
		if c := f.Conflict(); c != nil {
			msg := c.For(o.Ref.Kind)
			p.Recorder.Eventf(o.Object, nil, corev1.EventTypeWarning, v1beta1.ReasonConflict, "Apply", msg)
			// A route belongs to no component: its conflict is reported on
			// the routes.
			out.Failure = &Failure{Component: out.ProducedBy[c.Object.String()], Reason: v1beta1.ReasonConflict, Message: msg}
			return reader, nil
		}
	}
	out.ApplyFailures = map[v1beta1.ComponentType]apply.Failure{}
	for _, f := range result.Failures {
		if f.Stale() {
			// Another writer came first (the HPA, the deployment
			// controller): read again and retry, without an alarm.
			out.Stale = true
			continue
		}
		p.Recorder.Eventf(o.Object, nil, corev1.EventTypeWarning, f.Reason(), "Apply", f.Message())
		if _, seen := out.ApplyFailures[out.ProducedBy[f.Object.String()]]; !seen {
			out.ApplyFailures[out.ProducedBy[f.Object.String()]] = f
		}
	}
	scopes := []apply.PruneScope{{
		Namespace: o.Ref.Namespace,
		Labels:    map[string]string{o.Ref.Label(): o.Ref.Name},
		Owner:     o.Ref.UID,
		Kinds:     p.Watches.PresentGVKs(),
		Fields:    ownerFields(o.Ref),
	}}
	for _, pr := range producers {
		if pruner, ok := pr.(Pruner); ok {
			scopes = append(scopes, pruner.PruneScopes()...)
		}
	}
	var errs []error
	for _, scope := range scopes {
		deleted, err := p.Applier.Prune(ctx, scope, out.Objects)
		for _, d := range deleted {
			p.Recorder.Eventf(o.Object, nil, corev1.EventTypeNormal, v1beta1.EventPruned, "Prune", "deleted %s, no longer desired", d)
		}
		errs = append(errs, err)
	}
	return reader, errors.Join(errs...)
}

// ownerFields selects an owner's children through the owner index, for the
// kinds that have it (IndexedKinds).
func ownerFields(ref owner.Ref) map[schema.GroupVersionKind]client.MatchingFields {
	fields := map[schema.GroupVersionKind]client.MatchingFields{}
	for _, k := range IndexedKinds() {
		fields[k.GVK] = client.MatchingFields{owner.Index: ref.Key()}
	}
	return fields
}
