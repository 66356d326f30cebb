// Package golden compares test output with golden files under testdata/,
// and rewrites them when the tests run with -update.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apply"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with testdata/name.golden; with -update it writes the
// file first. Review an updated golden file's diff like code.
func Check(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test -update to create it", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); rerun with -update and review the diff:\n%s", path, diff)
	}
}

// Objects renders desired objects as the golden files hold them: each
// object's apply configuration as a YAML document, in order.
func Objects(t *testing.T, objs []apply.Object) []byte {
	t.Helper()
	var out strings.Builder
	for _, o := range objs {
		data, err := yaml.Marshal(o.Spec)
		if err != nil {
			t.Fatalf("encode %s: %v", o, err)
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	return []byte(out.String())
}
