package image

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/serval-dev/serval/internal/testenv"
)

// forbidden are packages no binary in the image may link: envtest (which
// starts API servers) and Serval's test machinery (internal/), whose
// sandbox kills processes and deletes paths when asked to.
func forbidden(pkg string) bool {
	return pkg == "sigs.k8s.io/controller-runtime/pkg/envtest" || strings.HasPrefix(pkg, "github.com/serval-dev/serval/internal/")
}

// deps lists the packages pkg links when built with tags.
func deps(t *testing.T, tags, pkg string) []string {
	out, err := exec.Command("go", "list", "-deps", "-tags", tags, pkg).CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.Fields(string(out))
}

// TestImageBinariesLinkNoTestMachinery: every binary the image holds,
// built as the image builds it, links neither envtest nor internal/. The
// CLI built from a checkout does (serval dev), which shows the check sees
// what it looks for.
func TestImageBinariesLinkNoTestMachinery(t *testing.T) {
	root, err := testenv.RepoRoot()
	require.NoError(t, err)
	t.Chdir(root)
	for inImage, pkg := range Binaries {
		for _, dep := range deps(t, BuildTags, pkg) {
			if forbidden(dep) {
				t.Errorf("%s (%s) links %s", inImage, pkg, dep)
			}
		}
	}
	var linked []string
	for _, dep := range deps(t, "", "./cmd/serval") {
		if forbidden(dep) {
			linked = append(linked, dep)
		}
	}
	require.Contains(t, linked, "sigs.k8s.io/controller-runtime/pkg/envtest", "the developer's CLI links serval dev's cluster")
	require.Contains(t, linked, "github.com/serval-dev/serval/internal/sandbox")
}
