package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// NotLinked fails t for every package that the package pkg (a path as the
// go command takes it, "." for the test's own) links, built with tags,
// whose import path is one of prefixes or under one of them. It is how a
// binary that must stay small checks what it does not link.
func NotLinked(t testing.TB, pkg, tags string, prefixes ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-tags", tags, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps %s listed %d packages", pkg, len(deps))
	}
	for _, dep := range deps {
		for _, p := range prefixes {
			if dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
