package main

import (
	"os/exec"
	"path/filepath"
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
