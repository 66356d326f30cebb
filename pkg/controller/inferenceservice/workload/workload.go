package workload

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/inferenceservice/components"
)

// Builder renders the workload of one deployment mode.
type Builder interface {
	// Objects returns the desired objects that run c.
	Objects(c *components.Component) ([]apply.Object, error)
	// Kinds lists every kind Objects may return, for pruning.
	Kinds() []schema.GroupVersionKind
	Observer
}
