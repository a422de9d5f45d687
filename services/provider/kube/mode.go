package kube

import (
	"cmp"
	"fmt"
	"log/slog"

	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/provider"
)

// Mode is the provider service's kubernetes mode, for
// provider.WithKubernetes: a Provider of the cluster controller-runtime's
// config.GetConfig finds (the kubeconfig named by --kubeconfig or
// KUBECONFIG, else the in-cluster service account, else ~/.kube/config),
// set up from cfg, which New has checked. It loads the cluster config, but
// does not connect yet.
func Mode(cfg provider.Config, b *bus.Bus, log *slog.Logger, p telemetry.Providers) (provider.Kubernetes, error) {
	leaseNS, err := cfg.ElectionNamespace()
	if err != nil {
		return nil, err
	}
	rest, err := ctrlconfig.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("provider: kubernetes mode: no cluster to connect to (set KUBECONFIG, or run in a cluster): %w", err)
	}
	k, err := New(rest, b, log, Options{
		Namespaces:     cfg.WatchedNamespaces(),
		ControllerName: cfg.Controller(),
		LeaderElection: cfg.LeaderElection,
		LeaseName:      cmp.Or(cfg.LeaseName, b.System()+"-provider"),
		LeaseNamespace: leaseNS,
		LeaseDuration:  cfg.LeaseDuration,
		RenewDeadline:  cfg.RenewDeadline,
		RetryPeriod:    cfg.RetryPeriod,
		Tracers:        p.Tracers,
		Meters:         p.Meters,
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}
