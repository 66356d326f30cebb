package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the field manager of every write Serval makes to children.
const FieldOwner = "serval-manager"

// Object is one desired child: an apply configuration and its identity.
type Object struct {
	GVK  schema.GroupVersionKind
	Key  types.NamespacedName
	Spec runtime.ApplyConfiguration
	// OmitsReplicas marks a Deployment whose replicas an autoscaler owns; the
	// apply step hands the field over before Serval stops sending it.
	OmitsReplicas bool
	// Frozen keeps the live object as it is: not written while it exists
	// (created only when missing), and still desired, so never pruned. A
	// parked one gets its replicas back.
	Frozen bool
	// Parked keeps a live workload, scaled to zero, that Serval cannot
	// render now (the last rolled-out revision of a stopped
	// InferenceService): never created, never pruned, only its replicas
	// written (recorded in ParkedReplicasAnnotation). Spec is unused.
	Parked bool
	// Kept keeps the live object as it is, if there is one: never
	// created, written or pruned (a router part held while what it needs
	// is missing). Spec is unused.
	Kept bool
	// Controller, when set, is the UID of the object's controlling owner
	// when that is not the owner it is applied for: a namespaced owner's
	// cluster-scoped object is controlled by a cluster-scoped one (a
	// namespace cache's volume, by its node group).
	Controller types.UID
	// OwnerLabel, when set, is the label that names the object's owner by
	// UID, in place of a controller reference: for a cluster-scoped object
	// of a namespaced owner, which cannot carry that owner's reference. An
	// existing object of the name without the label's value is another
	// owner's (a conflict).
	OwnerLabel string
}

// String names the object for messages: Kind namespace/name, or Kind
// name for a cluster-scoped object.
func (o Object) String() string {
	if o.Key.Namespace == "" {
		return o.GVK.Kind + " " + o.Key.Name // cluster-scoped
	}
	return o.GVK.Kind + " " + o.Key.String()
}

// hash is a digest of the desired state, compared with the last applied one,
// with the metadata keys the object sets.
func (o Object) hash() (string, owned, error) {
	data, err := json.Marshal(o.Spec)
	if err != nil {
		return "", owned{}, fmt.Errorf("encode %s: %w", o, err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), ownedOf(data), nil
}

// Hash is the digest of the desired state that the apply step writes in
// HashAnnotation: a live object carrying it is up to date. Take it before
// the object is applied (applying adds the annotation to Spec).
func (o Object) Hash() (string, error) {
	h, _, err := o.hash()
	return h, err
}

// newLive returns an empty object of the kind, to read the live object into:
// typed when the scheme knows the kind, else Unstructured (Knative Services).
func newLive(scheme *runtime.Scheme, gvk schema.GroupVersionKind) (client.Object, error) {
	obj, err := scheme.New(gvk)
	if runtime.IsNotRegisteredError(err) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	co, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("kind %s is not an object", gvk)
	}
	return co, nil
}
