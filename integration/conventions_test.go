package integration

import (
	"testing"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestConventions checks the module's conventions (testkit.Conventions).
// The end-to-end tests drive every service, so they may import them all.
func TestConventions(t *testing.T) {
	testkit.Conventions{Root: "."}.Check(t)
}
