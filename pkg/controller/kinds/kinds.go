// Package kinds describes the kinds of child objects Serval creates. Each
// deployment mode and each router declares its kinds with a Kind; the cache
// filters, the watches, the optional-CRD handling and the prune step all
// derive from those declarations (see package childkinds).
package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kind is a kind of child object.
type Kind struct {
	// GVK is the kind's group, version and kind.
	GVK schema.GroupVersionKind
	// CRD names the CustomResourceDefinition that serves an optional kind,
	// one a cluster may lack (Knative Service, HTTPRoute, VirtualService);
	// "" for kinds every cluster serves.
	CRD string
	// Install says what to install to get the CRD, for messages.
	Install string
	// Typed returns an empty typed object of the kind; nil for a kind Serval
	// reads as Unstructured (it ships no Go types Serval can use).
	Typed func() client.Object
	// StatusSignal, when set, reduces an object's status to what Serval
	// reads of it. An update that changes neither the object's metadata and
	// spec (its generation) nor this signal brings no reconcile: a
	// Deployment's controller writes its status several times per rollout,
	// and most of those writes change nothing Serval reports. Without one,
	// every update brings a reconcile: for kinds whose status Serval reads
	// broadly (a Knative Service) or that have no generation to tell a
	// change of spec by (a Service).
	StatusSignal func(client.Object) string
}

// NoStatus is the StatusSignal of a kind whose status Serval does not read
// and whose spec changes bump the generation (an autoscaler, whose
// controller rewrites its status as the metrics move): only changes to its
// metadata and spec bring a reconcile.
func NoStatus(client.Object) string { return "" }

// Optional reports whether the kind's CRD may be absent.
func (k Kind) Optional() bool { return k.CRD != "" }

// New returns an empty object of the kind: typed, or Unstructured.
func (k Kind) New() client.Object {
	if k.Typed != nil {
		return k.Typed()
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k.GVK)
	return u
}

// MissingMessage says that the kind's CRD is not installed, why that
// matters when why is not empty ("the route needs an HTTPRoute"), and what
// to install: the one message of a missing CRD, whatever needs it.
func (k Kind) MissingMessage(why string) string {
	if why == "" {
		return fmt.Sprintf("the CRD %s is not installed; %s", k.CRD, k.Install)
	}
	return fmt.Sprintf("the CRD %s is not installed, and %s; %s", k.CRD, why, k.Install)
}

// String is the kind's name with its group, for messages.
func (k Kind) String() string {
	if k.GVK.Group == "" {
		return k.GVK.Kind
	}
	return k.GVK.Kind + "." + k.GVK.Group
}

// Used returns the kinds of ks that objects of the given kinds are: the
// kinds one reconcile needs, whose CRDs must exist.
func Used(ks []Kind, gvks []schema.GroupVersionKind) []Kind {
	var out []Kind
	for _, k := range ks {
		for _, g := range gvks {
			if k.GVK == g {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
