package apply

import (
	"context"
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
	// uncached confirms that an object the cache does not show is really
	// absent: the cache holds only Serval-labelled children, and a foreign
	// object of the same name must not be taken over.
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

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s exists and is not controlled by this InferenceService (controller: %s); delete or rename it", e.Object, e.Owner)
}

// Apply applies each object unless its desired state is already live. owner
// is the controlling InferenceService's UID. It applies every object it can
// and returns the ones it could not: a *ConflictError for an object someone
// else controls, else the API server's error.
func (a *Applier) Apply(ctx context.Context, owner types.UID, objects []Object) []Failure {
	var failures []Failure
	for _, obj := range objects {
		if err := a.applyOne(ctx, owner, obj); err != nil {
			failures = append(failures, Failure{Object: obj, Err: err})
		}
	}
	return failures
}

func (a *Applier) applyOne(ctx context.Context, owner types.UID, obj Object) error {
	live, err := newLive(a.client.Scheme(), obj.GVK)
	if err != nil {
		return err
	}
	err = a.client.Get(ctx, obj.Key, live)
	if apierrors.IsNotFound(err) {
		err = a.uncached.Get(ctx, obj.Key, live)
	}
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return fmt.Errorf("get %s: %w", obj, err)
	}
	if live != nil {
		if ref := metav1.GetControllerOf(live); ref == nil || ref.UID != owner {
			return &ConflictError{Object: obj, Owner: controllerName(ref)}
		}
	}
	if obj.Frozen && live != nil {
		a.counts.Skip(obj.GVK.Kind)
		return nil
	}
	hash, err := obj.hash()
	if err != nil {
		return err
	}
	ck := cacheKey{kind: obj.GVK.Kind, key: obj.Key}
	version := ""
	if live != nil {
		version = versionOf(live)
	}
	if last, ok := a.cache.Load(ck); ok && last.(applied).hash == hash && last.(applied).version == version {
		// Unchanged since the last apply; or refused, and it would be again.
		a.counts.Skip(obj.GVK.Kind)
		return last.(applied).rejected
	}
	if live != nil {
		if obj.OmitsReplicas {
			if err := a.handOverReplicas(ctx, live, obj); err != nil {
				return err
			}
		}
	}
	return a.write(ctx, obj, ck, hash, version)
}

// write server-side applies obj and remembers what it applied, or that the
// API server refused it (against the live version liveVersion).
func (a *Applier) write(ctx context.Context, obj Object, ck cacheKey, hash, liveVersion string) error {
	result, err := a.applyAndRead(ctx, obj)
	if err != nil {
		err = fmt.Errorf("apply %s: %w", obj, err)
		if (Failure{Object: obj, Err: err}).Permanent() {
			a.cache.Store(ck, applied{hash: hash, version: liveVersion, rejected: err})
		} else {
			a.cache.Delete(ck)
		}
		return err
	}
	a.counts.Write(obj.GVK.Kind)
	a.cache.Store(ck, applied{hash: hash, version: result})
	return nil
}

func (a *Applier) applyAndRead(ctx context.Context, obj Object) (version string, err error) {
	if err := a.client.Apply(ctx, obj.Spec, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return "", err
	}
	return appliedVersionOf(obj.Spec)
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
