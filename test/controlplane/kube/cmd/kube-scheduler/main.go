// Command kube-scheduler is the upstream Kubernetes scheduler, built from
// k8s.io/kubernetes at the version pinned in go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
