// Command kubectl is the upstream Kubernetes CLI at the version pinned in go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()))
}
