// Command kubectl is the upstream Kubernetes CLI at the version pinned in go.mod.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Client auth plugins, as in the upstream kubectl.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// As upstream: set the verbosity before the command is built, since
	// building it already logs.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
