package image

import (
	"fmt"
	"os"
	"os/exec"
)

// Compile builds the Go package pkg (./cmd/manager) of the module in the
// working directory into file: static (no cgo), for linux/arch, trimmed
// paths, with the version and revision stamped into pkg/version.
func Compile(pkg, file, version, revision, arch string) error {
	ldflags := fmt.Sprintf("-s -w -X github.com/serval-dev/serval/pkg/version.Version=%s -X github.com/serval-dev/serval/pkg/version.Commit=%s", version, revision)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", file, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, out)
	}
	return nil
}
