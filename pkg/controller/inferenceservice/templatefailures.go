package inferenceservice

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// templateFailures counts the InferenceServices for which the ingress
// templates render a host or path a route cannot take. One long name in a
// long namespace is that service's problem; many point at the template,
// which is what ConfigValid says with the count.
type templateFailures struct {
	mu     sync.Mutex
	failed map[types.NamespacedName]bool
}

// record notes whether key's templates failed and returns how many
// InferenceServices fail now.
func (t *templateFailures) record(key types.NamespacedName, failed bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed == nil {
		t.failed = map[types.NamespacedName]bool{}
	}
	if failed {
		t.failed[key] = true
	} else {
		delete(t.failed, key)
	}
	return len(t.failed)
}
