package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/provider"
	"github.com/gatewire/gatewire/services/provider/kube"
)

// TestServiceFindsTheClusterWithKUBECONFIG runs the provider service in
// kubernetes mode the way its command does: the cluster comes from
// KUBECONFIG.
func TestServiceFindsTheClusterWithKUBECONFIG(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, cluster.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	h.create(service(h.ns, "backend"))
	s, err := provider.New(provider.Config{
		Mode: provider.ModeKubernetes, Namespaces: []string{h.ns},
		LeaderElection: true, LeaseNamespace: h.ns,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
	}, h.bus, nil, provider.WithKubernetes(kube.Mode))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(h.ctx)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	h.eventually("the service is ready", s.Ready)
	h.published(bus.ResourceKey("Service", h.ns, "backend"), nil)
	if s.Problems() != nil {
		t.Errorf("Problems in kubernetes mode: %v", s.Problems())
	}
}
