package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// PolicyObjects are the admission policy and its binding that the chart
// installs from config/policy/file, for a test to create.
func PolicyObjects(file string) ([]client.Object, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "policy", file))
	if err != nil {
		return nil, err
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 2 {
		return nil, fmt.Errorf("config/policy/%s: want a policy and its binding, found %d documents", file, len(docs))
	}
	policy, binding := &admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.Unmarshal([]byte(docs[0]), policy); err != nil {
		return nil, fmt.Errorf("config/policy/%s: %w", file, err)
	}
	if err := yaml.Unmarshal([]byte(docs[1]), binding); err != nil {
		return nil, fmt.Errorf("config/policy/%s: %w", file, err)
	}
	return []client.Object{policy, binding}, nil
}
