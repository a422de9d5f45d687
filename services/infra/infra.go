// Package infra is the infra service: it follows the infra bucket and runs
// Envoy for every gateway in it.
//
// The infra bucket (<sys>-infra) holds one busv1.Proxy per gateway under the
// key <namespace>.<gateway> (bus.GatewayKey), written by the translator. This
// service only reads it. For each key it makes the Envoy side match the value,
// and when a key goes it removes what it made. After the initial sync of the
// bucket it also removes what it finds for gateways no longer in the bucket, so
// a restart after missed deletes is clean; Ready reports true from then on.
//
// What "running Envoy" means depends on Config.Mode:
//
//   - host: a bootstrap file per gateway in Config.BootstrapDir and, when
//     Config.EnvoyPath names an envoy binary, an Envoy process per gateway
//     (package host).
//   - kubernetes: a ServiceAccount, ConfigMap, Deployment and Service per
//     gateway, applied server-side. Not implemented yet: New returns
//     ErrNotImplemented.
//
// Both modes render the Envoy bootstrap with package bootstrap: node.cluster is
// <namespace>/<gateway>, and the Envoy reaches the xds service at
// Config.XDSAddress over ADS.
//
// A value that cannot be used (undecodable, a key and a value that name
// different gateways, names that are not Kubernetes names) is logged and
// skipped, and what was provisioned from an earlier good value stays. A
// failure of the mode itself (a full disk, an unwritable folder) is logged and
// retried every few seconds until it succeeds or the key changes.
package infra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync/atomic"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/host"
)

// provisioner makes the Envoys of one mode match the infra bucket. Its
// methods are called from the one goroutine of Service.Run.
type provisioner interface {
	// Apply creates or updates what runs the gateway of p.
	Apply(ctx context.Context, p *busv1.Proxy) error
	// Remove removes what runs a gateway; no error if there is nothing.
	Remove(ctx context.Context, namespace, name string) error
	// Prune removes what runs the gateways for which keep returns false.
	Prune(ctx context.Context, keep func(namespace, name string) bool) error
	// Close releases what the provisioner holds (host mode: stops the Envoy
	// processes); what it made stays.
	Close() error
}

// Service is the infra service. Create it with New and start it with Run.
type Service struct {
	cfg   Config
	bus   *bus.Bus
	log   *slog.Logger
	prov  provisioner
	host  *host.Provisioner // host mode only
	ready atomic.Bool
}

// New checks cfg and returns a Service that provisions from the infra bucket of
// b. In host mode it creates the bootstrap folder. A nil log discards logs.
func New(cfg Config, b *bus.Bus, log *slog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("infra: nil bus")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, bus: b, log: log}
	switch cfg.Mode {
	case ModeKubernetes:
		return nil, fmt.Errorf("GATEWIRE_INFRA_MODE=%s: %w", cfg.Mode, ErrNotImplemented)
	case ModeHost:
		prov, err := newHost(cfg, log)
		if err != nil {
			return nil, err
		}
		s.prov, s.host = prov, prov
	}
	return s, nil
}

func newHost(cfg Config, log *slog.Logger) (*host.Provisioner, error) {
	envoy := cfg.EnvoyPath
	if envoy != "" {
		var err error
		if envoy, err = exec.LookPath(envoy); err != nil {
			return nil, fmt.Errorf("GATEWIRE_INFRA_ENVOY_PATH: %w", err)
		}
	}
	prov, err := host.New(host.Options{
		Dir:        cfg.BootstrapDir,
		XDSAddress: cfg.XDSAddress,
		AdminPort:  uint32(cfg.AdminPort),
		EnvoyPath:  envoy,
	}, log)
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_INFRA_BOOTSTRAP_DIR: %w", err)
	}
	return prov, nil
}

// Ready reports whether the infra bucket has been synced once: every gateway
// in it provisioned (or reported) and stale ones removed.
func (s *Service) Ready() bool { return s.ready.Load() }

// BootstrapPath is the absolute path of the bootstrap file of a gateway in host
// mode, whether or not it has been written yet; "" in other modes. It is safe
// for concurrent use.
func (s *Service) BootstrapPath(namespace, name string) string {
	if s.host == nil {
		return ""
	}
	return s.host.Path(namespace, name)
}
