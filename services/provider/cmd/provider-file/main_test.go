package main

import (
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLinksNoKubernetesClient checks what provider-file is for: none of the
// packages it links is client-go's or controller-runtime's, whose
// initialisation (every API group of client-go's scheme) and code kept
// 12 MiB more resident in an idle provider.
func TestLinksNoKubernetesClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "grpcnotrace", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, pkg := range deps {
		for _, banned := range []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/", "github.com/gatewire/gatewire/services/provider/kube"} {
			if strings.HasPrefix(pkg+"/", banned) {
				t.Errorf("provider-file links %s", pkg)
			}
		}
	}
}
