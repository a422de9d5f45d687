package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLinksNoKubernetesClient checks what infra-host is for: none of the
// packages it links is client-go's, controller-runtime's or one of the
// Kubernetes API's type packages, whose initialisation (every API group of
// client-go's scheme) and code kept 13 MiB more resident in an idle infra
// service.
func TestLinksNoKubernetesClient(t *testing.T) {
	testkit.NotLinked(t, ".", "grpcnotrace",
		"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/api", "github.com/gatewire/gatewire/services/infra/kube")
}
