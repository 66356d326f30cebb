package image

import (
	"fmt"
	"os"
	"os/exec"
)

// Binaries are the commands the image holds, by their path in it, and the
// package each is built from.
var Binaries = map[string]string{"/manager": "./cmd/manager", "/serval": "./cmd/serval", "/router": "./cmd/router", "/serval-node-agent": "./cmd/serval-node-agent", "/activator": "./cmd/activator"}

// BuildTags are the build tags of the image's binaries: release leaves the
// developer commands (serval dev, serval bench) and with them every piece
// of test machinery out of the CLI.
const BuildTags = "release"

// Compile builds the Go package pkg (./cmd/manager) of the module in the
// working directory into file: static (no cgo), for linux/arch, trimmed
// paths, with BuildTags and with the version and revision stamped into
// pkg/version.
func Compile(pkg, file, version, revision, arch string) error {
	ldflags := fmt.Sprintf("-s -w -X github.com/serval-dev/serval/pkg/version.Version=%s -X github.com/serval-dev/serval/pkg/version.Commit=%s", version, revision)
	cmd := exec.Command("go", "build", "-trimpath", "-tags", BuildTags, "-ldflags", ldflags, "-o", file, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w: %s", pkg, err, out)
	}
	return nil
}
