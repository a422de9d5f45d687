package main

import (
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLinksNoKubernetesClient checks what infra-host is for: none of the
// packages it links is client-go's, controller-runtime's or one of the
// Kubernetes API's type packages, whose initialisation (every API group of
// client-go's scheme) and code kept about 10 MiB more resident in an idle
// infra service.
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
		for _, banned := range []string{"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/", "k8s.io/api/", "github.com/gatewire/gatewire/services/infra/kube/"} {
			if strings.HasPrefix(pkg+"/", banned) {
				t.Errorf("infra-host links %s", pkg)
			}
		}
	}
}
