package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Applier applies desired children. It is safe for concurrent use; one
// Applier serves all reconciles, so its skip cache is shared.
type Applier struct {
	client client.Client
	// uncached reads an object the cache does not show but a create found
	// (see create.go), and the full managed fields of one Serval created.
	uncached client.Reader
	cache    sync.Map // cacheKey -> applied
	counts   Counter
}

// Counter counts writes and skips; metrics implement it.
type Counter interface {
	Write(kind string)
	Skip(kind string)
}

type noCounter struct{}

func (noCounter) Write(string) {}
func (noCounter) Skip(string)  {}

// New returns an Applier writing through c and confirming absent objects
// with uncached (c itself when nil); counts may be nil.
func New(c client.Client, uncached client.Reader, counts Counter) *Applier {
	if counts == nil {
		counts = noCounter{}
	}
	if uncached == nil {
		uncached = c
	}
	return &Applier{client: c, uncached: uncached, counts: counts}
}

type cacheKey struct {
	kind string
	key  types.NamespacedName
}

// applied is what was last applied to an object: the desired hash and the
// live version (see versionOf) the apply returned; or, for an object the API
// server refused, the hash it refused, the live version it was refused
// against ("" when absent) and why.
type applied struct {
	hash, version string
	rejected      error
}

// ConflictError is an existing object of a desired name that another owner
// controls. Serval never takes such an object over.
type ConflictError struct {
	Object Object
	Owner  string
}

// Error names the object, its controller and what the user can do.
func (e *ConflictError) Error() string { return e.For("owner") }

// For is Error naming the kind of owner that wanted the object.
func (e *ConflictError) For(ownerKind string) string {
	return fmt.Sprintf("%s exists and is not controlled by this %s (controller: %s); delete or rename it", e.Object, ownerKind, e.Owner)
}

// Result is what one Apply did.
type Result struct {
	// Created are the objects Apply created, as the API server stored them.
	// The cache has not seen them yet: a read of the cache right after
	// Apply would find them missing (see FreshReader).
	Created []client.Object
	// Failures are the objects Apply could not apply.
	Failures []Failure
}

// Apply applies each object unless its desired state is already live. owner
// is the controlling owner's UID (an object's Controller, when set, is its
// own). It applies every object it can
// and reports the ones it could not, in the order of objects: a
// *ConflictError for an object someone else controls, else the API server's
// error.
//
// The objects are applied at once, each in its own goroutine: they are
// independent of one another (Kubernetes resolves the references between a
// route, a Service and a Deployment whenever they exist), so the reconcile
// that creates an InferenceService's children waits for one round trip to
// the API server rather than one per child.
func (a *Applier) Apply(ctx context.Context, owner types.UID, objects []Object) Result {
	created := make([]client.Object, len(objects))
	errs := make([]error, len(objects))
	if len(objects) == 1 {
		created[0], errs[0] = a.applyOne(ctx, owner, objects[0])
	} else {
		var wg sync.WaitGroup
		for i, obj := range objects {
			wg.Go(func() { created[i], errs[i] = a.applyOne(ctx, owner, obj) })
		}
		wg.Wait()
	}
	var res Result
	for i, obj := range objects {
		created, err := created[i], errs[i]
		if err != nil {
			var missing *missingError
			res.Failures = append(res.Failures, Failure{Object: obj, Err: err, Missing: errors.As(err, &missing)})
		}
		if created != nil {
			res.Created = append(res.Created, created)
		}
	}
	return res
}

func (a *Applier) applyOne(ctx context.Context, owner types.UID, obj Object) (client.Object, error) {
	if obj.Kept {
		return nil, nil
	}
	if obj.Controller != "" {
		owner = obj.Controller
	}
	live, err := newLive(a.client.Scheme(), obj.GVK)
	if err != nil {
		return nil, err
	}
	err = a.client.Get(ctx, obj.Key, live)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return nil, fmt.Errorf("get %s: %w", obj, err)
	}
	if obj.Parked {
		return nil, a.park(ctx, owner, obj, live)
	}
	hash, keys, err := obj.hash()
	if err != nil {
		return nil, err
	}
	ck := cacheKey{kind: obj.GVK.Kind, key: obj.Key}
	if live == nil {
		created, taken, err := a.createAbsent(ctx, obj, ck, hash, keys)
		if err != nil {
			return nil, &missingError{err}
		}
		if !taken {
			return created, nil
		}
		// The name is taken: by a foreign object, or by one of Serval's that
		// the cache has not seen yet.
		if live, err = newLive(a.client.Scheme(), obj.GVK); err != nil {
			return nil, err
		}
		if err := a.uncached.Get(ctx, obj.Key, live); err != nil {
			return nil, fmt.Errorf("get %s: %w", obj, err)
		}
	}
	if !ownedBy(live, owner, obj.OwnerLabel) {
		return nil, &ConflictError{Object: obj, Owner: controllerName(metav1.GetControllerOf(live))}
	}
	if obj.Frozen {
		if _, parked := live.GetAnnotations()[ParkedReplicasAnnotation]; parked {
			return nil, a.unpark(ctx, obj, live)
		}
		a.counts.Skip(obj.GVK.Kind)
		return nil, nil
	}
	version := versionOf(live, keys)
	last, known := a.cache.Load(ck)
	if known && last.(applied).hash == hash && last.(applied).version == version {
		// Unchanged since the last apply; or refused, and it would be again.
		a.counts.Skip(obj.GVK.Kind)
		return nil, last.(applied).rejected
	}
	if !known && liveHash(live) == hash {
		// Applied before this process started (a restart, a new leader):
		// the live object carries the hash of this very desired state.
		a.cache.Store(ck, applied{hash: hash, version: version})
		a.counts.Skip(obj.GVK.Kind)
		return nil, nil
	}
	if ownsThroughUpdate(live) {
		if live, err = a.upgradeOwnership(ctx, obj); err != nil {
			return nil, err
		}
	}
	if obj.OmitsReplicas {
		if err := a.handOverReplicas(ctx, live, obj); err != nil {
			return nil, err
		}
	}
	if err := withHash(obj.Spec, hash); err != nil {
		return nil, err
	}
	return nil, a.write(ctx, obj, ck, hash, version, keys)
}

// createAbsent creates an object the cache does not show, unless the API
// server refused the same desired state before, and returns it. It reports
// taken, with no error, when the name is taken.
func (a *Applier) createAbsent(ctx context.Context, obj Object, ck cacheKey, hash string, keys owned) (created client.Object, taken bool, err error) {
	if last, known := a.cache.Load(ck); known && last.(applied).hash == hash && last.(applied).version == "" && last.(applied).rejected != nil {
		a.counts.Skip(obj.GVK.Kind)
		return nil, false, last.(applied).rejected
	}
	if err := withHash(obj.Spec, hash); err != nil {
		return nil, false, err
	}
	created, err = a.create(ctx, obj)
	switch {
	case errors.Is(err, errExists):
		return nil, true, nil
	case err != nil:
		err = fmt.Errorf("create %s: %w", obj, err)
		a.remember(ck, hash, "", err, obj)
		return nil, false, err
	}
	a.counts.Write(obj.GVK.Kind)
	a.cache.Store(ck, applied{hash: hash, version: versionOf(created, keys)})
	return created, false, nil
}

// write server-side applies obj and remembers what it applied, or that the
// API server refused it (against the live version liveVersion).
func (a *Applier) write(ctx context.Context, obj Object, ck cacheKey, hash, liveVersion string, keys owned) error {
	result, err := a.applyAndRead(ctx, obj, keys)
	if err != nil {
		err = fmt.Errorf("apply %s: %w", obj, err)
		a.remember(ck, hash, liveVersion, err, obj)
		return err
	}
	a.counts.Write(obj.GVK.Kind)
	a.cache.Store(ck, applied{hash: hash, version: result})
	return nil
}

// remember records a refused write: a rejection, which the same desired
// state against the same live version would meet again, is kept so that it
// is not retried; any other failure is forgotten, to be retried.
func (a *Applier) remember(ck cacheKey, hash, liveVersion string, err error, obj Object) {
	if (Failure{Object: obj, Err: err}).Permanent() {
		a.cache.Store(ck, applied{hash: hash, version: liveVersion, rejected: err})
	} else {
		a.cache.Delete(ck)
	}
}

func (a *Applier) applyAndRead(ctx context.Context, obj Object, keys owned) (version string, err error) {
	if err := a.client.Apply(ctx, obj.Spec, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return "", err
	}
	return appliedVersionOf(obj.Spec, keys)
}

func controllerName(ref *metav1.OwnerReference) string {
	if ref == nil {
		return "none"
	}
	return ref.Kind + " " + ref.Name
}

// ForgetOwner drops the skip-cache entries of an InferenceService's children
// ({name} and {name}-*), once it is gone, so the cache does not grow with
// deleted objects.
func (a *Applier) ForgetOwner(namespace, name string) {
	a.cache.Range(func(k, _ any) bool {
		ck := k.(cacheKey)
		if ck.key.Namespace == namespace && (ck.key.Name == name || strings.HasPrefix(ck.key.Name, name+"-")) {
			a.cache.Delete(k)
		}
		return true
	})
}
