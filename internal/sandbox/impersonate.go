package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// ImpersonatingKubeconfig writes a kubeconfig that acts as user (for a
// ServiceAccount: system:serviceaccount:NAMESPACE:NAME), through the
// sandbox's admin credentials and Kubernetes impersonation, and returns its
// path. A process run with it has exactly the rights RBAC gives user: the
// way to prove that a chart's Roles are enough, without running it in a pod.
func (s *Sandbox) ImpersonatingKubeconfig(user string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(s.KubeconfigPath)
	if err != nil {
		return "", fmt.Errorf("read the sandbox's kubeconfig: %w", err)
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
		if ns, ok := serviceAccountNamespace(user); ok {
			// What the API server adds to a ServiceAccount's own token.
			auth.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
		}
	}
	path := filepath.Join(s.Dir, "kubeconfig-"+strings.NewReplacer(":", "-", "/", "-").Replace(user))
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// serviceAccountNamespace is NAMESPACE of system:serviceaccount:NAMESPACE:NAME.
func serviceAccountNamespace(user string) (string, bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", false
	}
	namespace, _, ok := strings.Cut(rest, ":")
	return namespace, ok
}
