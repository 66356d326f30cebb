package childwatch

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// epochs counts, per cache and kind, the times a kind's CRD went: each
// time, the kind's informer is removed from the cache once, whichever of
// the controllers sharing the cache sees the CRD go first. An informer
// kept across a CRD's deletion keeps failing to list, and picks the kind
// up again only after its reflector's backoff (up to half a minute): its
// objects are stale meanwhile, and an owner waits for a child it made.
// Every Watches whose source was started in an earlier epoch starts a new
// one, on a fresh informer, when the CRD is back.
type epochs struct {
	mu     sync.Mutex
	byKind map[string]*kindEpoch
}

// kindEpoch is one kind's: how many times its CRD went, and whether it is
// gone now.
type kindEpoch struct {
	epoch  int
	absent bool
}

// sharedEpochs are the epochs of every cache in the process, by cache.
var sharedEpochs sync.Map // cache.Cache -> *epochs

func epochsOf(c cache.Cache) *epochs {
	e, _ := sharedEpochs.LoadOrStore(c, &epochs{byKind: map[string]*kindEpoch{}})
	return e.(*epochs)
}

// gone records that the kind's CRD is absent, and removes the kind's
// informer the first time it is seen gone in an epoch. It returns the
// epoch now.
func (e *epochs) gone(ctx context.Context, c cache.Cache, key string, obj client.Object) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := e.kind(key)
	if k.absent {
		return k.epoch, nil
	}
	k.absent = true
	k.epoch++
	return k.epoch, c.RemoveInformer(ctx, obj)
}

// back records that the kind's CRD exists, and returns the epoch.
func (e *epochs) back(key string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := e.kind(key)
	k.absent = false
	return k.epoch
}

// kind is the kind's entry. e.mu is held.
func (e *epochs) kind(key string) *kindEpoch {
	k := e.byKind[key]
	if k == nil {
		k = &kindEpoch{}
		e.byKind[key] = k
	}
	return k
}
