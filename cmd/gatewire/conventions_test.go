package main

import (
	"testing"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestConventions checks the module's conventions (testkit.Conventions).
// The CLI runs every service in standalone mode, so it may import them all.
func TestConventions(t *testing.T) {
	testkit.Conventions{Root: "."}.Check(t)
}
