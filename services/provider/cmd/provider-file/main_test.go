package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLinksNoKubernetesClient checks what provider-file is for: none of the
// packages it links is client-go's or controller-runtime's, whose
// initialisation (every API group of client-go's scheme) and code kept
// 12 MiB more resident in an idle provider.
func TestLinksNoKubernetesClient(t *testing.T) {
	testkit.NotLinked(t, ".", "grpcnotrace",
		"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/gatewire/gatewire/services/provider/kube")
}
