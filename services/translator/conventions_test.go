package translator

import (
	"testing"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestConventions checks the module's conventions (testkit.Conventions):
// package docs, imports of pkg and proto only, goleak in every test package.
func TestConventions(t *testing.T) {
	testkit.Conventions{Root: ".", Imports: testkit.ServiceImports}.Check(t)
}
