package nodeagent

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/boundedevents"
	"github.com/serval-dev/serval/pkg/config"
)

// Options configure one agent.
type Options struct {
	// Node and Group are the node and node group the agent serves.
	Node, Group string
	// Namespace is the manager's, home of serval-config.
	Namespace string
	// ModelsRoot is where the group's disk is mounted.
	ModelsRoot string
	// HealthProbeAddr serves /healthz and /readyz; "0" disables.
	HealthProbeAddr string
	// SkipNameValidation allows several agents in one process (tests, the
	// sandbox).
	SkipNameValidation bool
}

// Run runs an agent until ctx ends. Its cache holds only its node's
// LocalModelNode and serval-config.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if o.Node == "" || o.Group == "" || o.ModelsRoot == "" {
		return fmt.Errorf("the node (NODE_NAME), --group and --models-root are required")
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: o.HealthProbeAddr,
		Controller:             ctrlconfig.Controller{SkipNameValidation: &o.SkipNameValidation},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.LocalModelNode{}: {Field: fields.OneTermEqualSelector("metadata.name", o.Node)},
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{o.Namespace: {}},
				Field: fields.OneTermEqualSelector("metadata.name", config.ConfigMapName)},
		}},
	})
	if err != nil {
		return fmt.Errorf("create the agent: %w", err)
	}
	recorder := boundedevents.Recorder(mgr.GetEventRecorder("serval-node-agent"))
	a := &Agent{Client: mgr.GetClient(), Recorder: recorder,
		Config: config.NewStore(mgr.GetClient(), o.Namespace, recorder), Node: o.Node, Group: o.Group, Disk: Disk{Root: o.ModelsRoot}}
	if err := a.SetupWithManager(mgr); err != nil {
		return err
	}
	if o.HealthProbeAddr != "0" && o.HealthProbeAddr != "" {
		if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
