package operator

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/boundedevents"
)

// decodable is an API object whose stored spec may not decode (see package
// tolerant).
type decodable interface {
	client.Object
	SpecDecodeError() string
}

// undecodableObjects is the gauge of stored objects whose spec does not
// decode, by kind and name: 1 while the object is in that state.
var undecodableObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "serval_undecodable_objects",
	Help: "Stored Serval objects whose spec does not decode (1 each, by kind and name); Serval skips them until they are fixed.",
}, []string{"kind", "namespace", "name"})

// undecodableReporter reports every object of Serval's kinds whose stored
// spec does not decode: an Event on the object when it gets into that state,
// and the serval_undecodable_objects gauge while it stays there. The others
// are reconciled as usual; the InferenceService reconciler also says so in
// the object's Ready condition.
type undecodableReporter struct {
	recorder events.EventRecorder

	// Only the leader records Events, so replicas do not repeat them. The
	// informers report the objects present at start before the election is
	// decided; their Events wait in pending until this replica leads.
	mu      sync.Mutex
	leading bool
	pending map[string]func()
}

// undecodableKinds are the kinds reported, by kind name.
var undecodableKinds = map[string]decodable{
	"InferenceService":      &v1beta1.InferenceService{},
	"ServingRuntime":        &v1alpha1.ServingRuntime{},
	"ClusterServingRuntime": &v1alpha1.ClusterServingRuntime{},
}

// watchUndecodable registers the reporter on the informers of every kind.
func watchUndecodable(ctx context.Context, mgr manager.Manager) error {
	r := &undecodableReporter{recorder: boundedevents.Recorder(mgr.GetEventRecorder("serval-manager")), pending: map[string]func(){}}
	go r.flushWhenLeading(ctx, mgr.Elected())
	for kind, obj := range undecodableKinds {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watch %s for specs that do not decode: %w", kind, err)
		}
		if _, err := inf.AddEventHandler(r.handler(kind)); err != nil {
			return err
		}
	}
	return nil
}

func (r *undecodableReporter) handler(kind string) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { r.observe(kind, nil, obj) },
		UpdateFunc: func(old, obj any) {
			r.observe(kind, old, obj)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if d, ok := obj.(decodable); ok {
				r.forget(kind, d)
			}
		},
	}
}

// observe updates the gauge and records an Event when the object's spec has
// just stopped decoding (or says something new about why).
func (r *undecodableReporter) observe(kind string, old, obj any) {
	d, ok := obj.(decodable)
	if !ok {
		return
	}
	msg := d.SpecDecodeError()
	if msg == "" {
		r.forget(kind, d)
		return
	}
	undecodableObjects.WithLabelValues(kind, d.GetNamespace(), d.GetName()).Set(1)
	if prev, ok := old.(decodable); ok && prev.SpecDecodeError() == msg {
		return
	}
	record := func() {
		r.recorder.Eventf(d, nil, corev1.EventTypeWarning, v1beta1.ReasonUndecodableSpec, "Decode",
			"%s %s is skipped: its stored spec does not decode: %s; fix the field or delete the object", kind, client.ObjectKeyFromObject(d), msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leading {
		record()
		return
	}
	r.pending[kind+"/"+client.ObjectKeyFromObject(d).String()] = record
}

// forget drops a fixed or deleted object from the gauge and the pending Events.
func (r *undecodableReporter) forget(kind string, d decodable) {
	undecodableObjects.DeleteLabelValues(kind, d.GetNamespace(), d.GetName())
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, kind+"/"+client.ObjectKeyFromObject(d).String())
}

// flushWhenLeading records the pending Events once this replica leads.
func (r *undecodableReporter) flushWhenLeading(ctx context.Context, elected <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-elected:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leading = true
	for _, record := range r.pending {
		record()
	}
	r.pending = nil
}
