// Package buildinfo is the version and commit of a gatewire binary.
//
// The Makefile stamps both at link time, from `git describe --tags
// --always --dirty` and `git rev-parse HEAD`:
//
//	go build -ldflags "-X github.com/gatewire/gatewire/pkg/buildinfo.version=v0.1.0-3-g62041aa \
//	    -X github.com/gatewire/gatewire/pkg/buildinfo.commit=62041aa..."
//
// A binary built without them (go build, go test, go run) reports the
// version of its main module when the Go toolchain recorded one (go install
// of a tagged module), else "dev", and the commit the toolchain recorded
// from version control, else "unknown".
package buildinfo

import "runtime/debug"

// Stamped at link time; see the package doc.
var (
	version string
	commit  string
)

// Version is the version of the binary: "v0.1.0", "v0.1.0-3-g62041aa", or
// "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Commit is the full hash of the commit the binary was built from, or
// "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}
