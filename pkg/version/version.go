// Package version holds what the build stamps into every Serval binary:
//
//	go build -ldflags "-X github.com/serval-dev/serval/pkg/version.Version=v0.2.0 \
//	  -X github.com/serval-dev/serval/pkg/version.Commit=$(git rev-parse HEAD)"
//
// `make image` and `make build` stamp them; a plain `go build` leaves the
// defaults, and the commit then comes from Go's own build information.
package version

import (
	"fmt"
	"runtime/debug"
)

// Version is the release, such as v0.2.0; "dev" when not stamped.
var Version = "dev"

// Commit is the source revision; read from Go's build information when not
// stamped.
var Commit = ""

// String is the version and commit, as `serval version` and `manager
// --version` print it.
func String() string {
	commit := Commit
	if commit == "" {
		commit = vcsRevision()
	}
	if commit == "" {
		return Version
	}
	return fmt.Sprintf("%s (commit %s)", Version, commit)
}

func vcsRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}
