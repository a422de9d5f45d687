package infra

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/gatewire/gatewire/pkg/certs"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/host"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// Bootstrap is the Envoy bootstrap, as YAML, that a service with cfg
// writes for proxy, a value of the infra bucket of the installation
// system: in host mode the file of the gateway, whose node.id ends with
// instance (the host name of the service); in kubernetes mode the
// bootstrap of the gateway's ConfigMap, whose node.id each pod replaces
// with its own. cfg must have passed Validate. It is what `gatewire
// bootstrap` prints.
func Bootstrap(cfg Config, system, instance string, proxy *busv1.Proxy) ([]byte, error) {
	ns, name := proxy.GetNamespace(), proxy.GetName()
	if err := bootstrap.CheckGateway(ns, name); err != nil {
		return nil, err
	}
	serverID := certs.ServiceID{TrustDomain: cmp.Or(cfg.TrustDomain, certs.DefaultTrustDomain), Name: certs.XDSService}.String()
	switch cfg.Mode {
	case ModeKubernetes:
		var tls *bootstrap.TLS
		if !cfg.XDSInsecure {
			tls = kubemode.BootstrapTLS(serverID)
		}
		return kubemode.Bootstrap(cfg.kubeOptions(system), bootstrap.NodeCluster(ns, name), tls)
	case ModeHost:
		var tls *bootstrap.TLS
		if !cfg.XDSInsecure {
			dir, err := filepath.Abs(cfg.BootstrapDir)
			if err != nil {
				return nil, fmt.Errorf("GATEWIRE_INFRA_BOOTSTRAP_DIR: %w", err)
			}
			tls = host.BootstrapTLS(dir, ns, name, serverID)
		}
		return host.Render(host.Options{XDSAddress: cfg.xdsAddress(), AdminPort: uint32(cfg.AdminPort)}, instance, proxy, tls)
	}
	return nil, fmt.Errorf("GATEWIRE_INFRA_MODE: %q: want %q or %q", cfg.Mode, ModeHost, ModeKubernetes)
}
