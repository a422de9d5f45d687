package kube

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// Connect is the kubernetes mode of the infra service, for
// infra.WithKubernetes: a Provisioner for the API server of rc or, when rc
// is nil, of the one kubectl would use (KUBECONFIG, ~/.kube/config, the
// pod's service account).
func Connect(rc *rest.Config) kubemode.Connect {
	return func(opts Options, log *slog.Logger) (kubemode.Cluster, error) {
		cfg := rc
		if cfg == nil {
			loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
			var err error
			if cfg, err = loader.ClientConfig(); err != nil {
				return nil, fmt.Errorf("no API server (set KUBECONFIG or run in a pod): %w", err)
			}
		}
		p, err := New(cfg, opts, log)
		if err != nil {
			return nil, err
		}
		return cluster{p}, nil
	}
}

// cluster is a Provisioner as a kubemode.Cluster.
type cluster struct{ *Provisioner }

func (c cluster) SecretStore(namespace, name string, createOnly bool) certs.Store {
	return c.Provisioner.SecretStore(namespace, name, createOnly)
}

func (c cluster) Elect(ctx context.Context, e Election, log *slog.Logger, lead func(ctx context.Context), onLeader func(identity string)) error {
	return Elect(ctx, c.client, e, log, lead, onLeader)
}
