package testkit

import "testing"

// TestPkgConventions checks the conventions of the pkg module, which every
// service shares.
func TestPkgConventions(t *testing.T) {
	Conventions{Root: "..", Imports: []string{Tree + "proto"}}.Check(t)
}

// TestProtoConventions checks the proto module from here: it holds only
// generated code and no test of its own, and giving it one would make it
// depend on the pkg module that depends on it.
func TestProtoConventions(t *testing.T) {
	Conventions{Root: "../../proto", Imports: []string{}}.Check(t)
}
