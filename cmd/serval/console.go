package main

import (
	"fmt"
	"net"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/serval-dev/serval/pkg/console"
)

func consoleCommand() *cobra.Command {
	var (
		listen, kubeconfig, kubeContext string
		inCluster                       bool
	)
	cmd := &cobra.Command{
		Use:   "console [--listen 127.0.0.1:0] [--kubeconfig FILE] [--context NAME]",
		Short: "Serve a read-only web console of the cluster's services, as you",
		Long: `Serves a read-only web console: the services of every kind across the
namespaces you may read, each service's conditions, children, Events and
manifest, InferenceGraphs and LLMInferenceServices drawn. Every read is made
with your kubeconfig's credentials, so you see what they may read.

It prints the address to open, which carries a secret for this run: another
user of this machine who finds the port reads nothing.

In the cluster (--in-cluster, as the chart runs it), it reads with the bearer
token of each request, which an authenticating proxy in front of it must send
(Authorization or X-Forwarded-Access-Token).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := console.Options{Auth: console.AuthLocal}
			var err error
			if inCluster {
				o.Auth, o.ListNamespaces = console.AuthForwarded, true
				o.Config, err = rest.InClusterConfig()
			} else {
				rules := clientcmd.NewDefaultClientConfigLoadingRules()
				rules.ExplicitPath = kubeconfig
				cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
				if o.Config, err = cc.ClientConfig(); err == nil {
					// Only a namespace the kubeconfig names: "default" is
					// a guess the page would present as an answer.
					var explicit bool
					var ns string
					if ns, explicit, err = cc.Namespace(); explicit {
						o.DefaultNamespace = ns
					}
				}
			}
			if err != nil {
				return fmt.Errorf("the cluster's address and credentials: %w", err)
			}
			s, err := console.New(o)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "Serval console: %s\n", s.URL("http://"+ln.Addr().String()))
			return console.Serve(ctx, ln, s)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "the address to serve on (port 0: any free port)")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "the kubeconfig context (default: its current one)")
	cmd.Flags().BoolVar(&inCluster, "in-cluster", false, "run in the cluster: read with each request's forwarded bearer token")
	return cmd
}
