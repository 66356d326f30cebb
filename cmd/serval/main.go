// Command serval is Serval's command-line tool: `serval migrate` turns KServe
// manifests into Serval manifests; `serval console` serves a read-only web
// console of the cluster's services; `serval version` prints the version.
// Built from a checkout, it also has `serval dev` and `serval bench`, which
// run a local cluster; the image's build (tag release) leaves them, and
// all test machinery, out.
package main

import (
	"fmt"
	"os"

	"github.com/serval-dev/serval/pkg/version"

	"github.com/spf13/cobra"

	"github.com/serval-dev/serval/pkg/migrate"
)

func main() {
	root := &cobra.Command{Use: "serval", Short: "Serval: Kubernetes model inference serving", SilenceUsage: true}
	root.AddCommand(migrateCommand(), consoleCommand(), versionCommand())
	root.AddCommand(developerCommands()...)
	if err := root.Execute(); err != nil {
		os.Exit(migrate.ExitError)
	}
}

func migrateCommand() *cobra.Command {
	var o migrate.RunOptions
	cmd := &cobra.Command{
		Use:   "migrate -f FILE|DIR|- [-f ...] [-o DIR]",
		Short: "Rewrite KServe manifests as Serval manifests",
		Long: `Rewrites the serving.kserve.io API group, the serving.kserve.io/ and
networking.kserve.io/ annotation and label keys and the legacy deployment-mode
values, keeping comments, key order and every other document as written.
Reports on stderr what cannot be carried over.

Exit codes: 0 done; 2 done, with findings that cannot be carried over;
1 error (or any such finding with --strict, in which case nothing is written).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			code := migrate.Run(o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if code != migrate.ExitOK {
				os.Exit(code)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&o.Files, "filename", "f", nil, "a manifest file, a directory of them, or - for standard input (repeatable)")
	cmd.Flags().StringVarP(&o.OutDir, "output-dir", "o", "", "write one file per input file into this directory instead of standard output")
	cmd.Flags().BoolVar(&o.Strict, "strict", false, "fail, writing nothing, if anything cannot be carried over")
	cmd.Flags().BoolVar(&o.NoPinProtocol, "no-pin-protocol", false, "let Serval choose the protocol where it differs from KServe's v1")
	cmd.Flags().StringVar(&o.DefaultMode, "default-mode", "Serverless", "the source cluster's default deployment mode (Serverless, KServe's default, or RawDeployment), which manifests without the annotation ran in")
	return cmd
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), version.String()) },
	}
}
