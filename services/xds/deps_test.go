package xds

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoKubernetesDeps keeps the xds service free of Kubernetes clients:
// it reads only the bus.
func TestNoKubernetesDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		dep = strings.TrimSpace(dep)
		for _, banned := range []string{"k8s.io/", "sigs.k8s.io/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("services/xds depends on %s", dep)
			}
		}
	}
}
