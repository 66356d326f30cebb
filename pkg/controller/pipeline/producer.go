package pipeline

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/kinds"
)

// Producer makes one part of an owner's children: a component's workload,
// the routes, an LLM's picker, a cache's volumes. A run renders every
// producer, applies what they rendered in one step, prunes the rest, and
// lets each read back the state of what it made. The optional CRDs a run
// needs are the kinds of what the producers rendered: no producer lists
// them.
type Producer interface {
	// Component is the part of the owner its objects belong to: apply
	// failures and conflicts are reported on it ("" for the routes, or an
	// owner with no components).
	Component() v1beta1.ComponentType
	// Render returns the desired objects, or a Failure that stops the run
	// before anything is applied (a refusal, a spec that cannot be built).
	// It reads nothing from the cluster.
	Render() ([]apply.Object, *Failure, error)
	// Absent is told the first kind among the rendered objects whose CRD is
	// absent. A Failure stops the run; nil goes on without the objects of
	// the absent kinds, and the producer reports the gap itself.
	Absent(k *kinds.Kind) *Failure
	// Observe reads the state of what the producer made through r: the
	// cache, plus what the run created. It is not called when the run
	// stopped.
	Observe(ctx context.Context, r client.Reader) error
}

// Pruner is a producer some of whose objects another owner controls (a
// namespace cache's cluster-scoped volumes, controlled by their node
// groups): it says where the run's prune finds the ones it made before.
type Pruner interface {
	Producer
	PruneScopes() []apply.PruneScope
}

// Objects is a producer of objects rendered beforehand, that reads nothing
// back (a node group's agent, a stopped service's parked workloads).
func Objects(component v1beta1.ComponentType, objs ...apply.Object) Producer {
	return fixed{component: component, objs: objs}
}

type fixed struct {
	component v1beta1.ComponentType
	objs      []apply.Object
}

func (f fixed) Component() v1beta1.ComponentType             { return f.component }
func (f fixed) Render() ([]apply.Object, *Failure, error)    { return f.objs, nil, nil }
func (f fixed) Absent(*kinds.Kind) *Failure                  { return nil }
func (f fixed) Observe(context.Context, client.Reader) error { return nil }
