// Command serval-node-agent keeps a node's cached models in step with its
// LocalModelNode, for one node group (see package nodeagent). The manager
// runs it as a DaemonSet on each group's nodes when serval-config's
// localModel.agent.enabled is true.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/serval-dev/serval/pkg/nodeagent"
	"github.com/serval-dev/serval/pkg/version"
)

func main() {
	o := nodeagent.Options{Node: os.Getenv("NODE_NAME")}
	flag.StringVar(&o.Group, "group", "", "The LocalModelNodeGroup whose disk is mounted at --models-root.")
	flag.StringVar(&o.Namespace, "namespace", "serval-system", "The manager's namespace, home of serval-config.")
	flag.StringVar(&o.ModelsRoot, "models-root", "/mnt/models", "Where the group's disk is mounted.")
	flag.StringVar(&o.HealthProbeAddr, "health-probe-bind-address", ":8081", `Health probe address; "0" disables.`)
	showVersion := flag.Bool("version", false, "Print the version and exit.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(version.String())
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if err := nodeagent.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), o); err != nil {
		fmt.Fprintln(os.Stderr, "serval-node-agent:", err)
		os.Exit(1)
	}
}
