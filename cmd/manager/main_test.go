package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestLinkerDropsUnusedMethods guards the manager's size. A Go binary from
// which a method can be looked up by name at run time
// (reflect.Value.MethodByName with a name not known at build time, as
// text/template's evaluator does) keeps every exported method of every
// type it links: for the manager, which links all Kubernetes API groups,
// 10 MB of code and tables more, mapped into every replica's memory (see
// pkg/strtemplate). Pod's SwaggerDoc, which nothing calls, is the witness.
func TestLinkerDropsUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the manager")
	}
	_ = corev1.Pod{}.SwaggerDoc // the witness exists: this would not compile otherwise
	binary := filepath.Join(t.TempDir(), "manager")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", binary).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	symbols := string(out)
	if !strings.Contains(symbols, "k8s.io/api/core/v1.(*Pod).DeepCopyObject") {
		t.Fatalf("the symbol table lacks Pod's DeepCopyObject, which the manager calls: cannot tell what the linker kept")
	}
	for _, witness := range []string{"k8s.io/api/core/v1.Pod.SwaggerDoc", "k8s.io/api/core/v1.(*Pod).SwaggerDoc"} {
		if strings.Contains(symbols, witness+"\n") {
			t.Errorf("the manager keeps %s, which nothing calls: something it links looks methods up by name at run time (text/template's evaluator does; use pkg/strtemplate), and the linker then keeps every exported method", witness)
		}
	}
}

// TestFlagsDocumented: docs/configuration.md's table of manager flags names
// every flag the manager has, and no other.
func TestFlagsDocumented(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	bindFlags(fs)
	have := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { have[f.Name] = true })
	// Flags that libraries register on the command line as they load
	// (controller-runtime's --kubeconfig), less the test binary's own.
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			have[f.Name] = true
		}
	})
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Manager flags")
	if !ok {
		t.Fatal("docs/configuration.md has no section '## Manager flags'")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(first, -1) {
			documented[m[1]] = true
		}
	}
	for name := range have {
		if !documented[name] {
			t.Errorf("--%s is a manager flag that docs/configuration.md does not list", name)
		}
	}
	for name := range documented {
		if !have[name] {
			t.Errorf("docs/configuration.md lists --%s, which the manager does not have", name)
		}
	}
}
