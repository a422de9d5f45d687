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
//     gateway, applied server-side (package kube describes them), in the
//     Gateway's namespace or in Config.Namespace.
//
// Both modes render the Envoy bootstrap with package bootstrap: node.cluster is
// <namespace>/<gateway>, and the Envoy reaches the xds service at
// Config.XDSAddress over ADS (by default 127.0.0.1:18000 in host mode and
// gatewire-xds.gatewire-system.svc:18000 in kubernetes mode).
//
// # Kubernetes mode
//
// With Config.LeaderElection (the default) the replicas of the service elect
// one leader with a Lease (Config.LeaderElectionNamespace/
// LeaderElectionID, by default <system>-infra in the pod's namespace); only
// the leader follows the infra bucket and writes. A replica that loses the
// lease stops writing and campaigns again. A standby replica is ready once it
// has seen a leader; the leader once it has synced.
//
// The leader also follows the Services it made and publishes each Gateway's
// addresses (the load balancer's ingress IPs and host names, else the
// Service's cluster IPs) to the status bucket, as a busv1.Status with only
// object, gateway and addresses set, under a key of its own ([StatusKey]):
//
//	Gateway.<namespace>.<name>.=infra.=infra
//
// '=' never occurs in Kubernetes names, so the key cannot meet a translator's
// (nor the xds service's =xds entries); it is for the provider's status writer
// to merge into the Gateway's status.addresses. The entry goes when the
// Service goes or has no address; on becoming leader the service removes the
// entries of Services that no longer exist.
//
// rbac.yaml beside this file lists the permissions kubernetes mode needs.
//
// This package does not import package kube, which talks to the cluster:
// the kubernetes mode is given to New with WithKubernetes(kube.Connect(nil)),
// and package kubemode holds what this package knows of it. So a binary of
// the host mode alone, cmd/infra-host, links no Kubernetes client.
//
// A value that cannot be used (undecodable, a key and a value that name
// different gateways, names that are not Kubernetes names, in kubernetes mode
// a port or Service type that cannot be provisioned) is logged and skipped,
// and what was provisioned from an earlier good value stays. A failure of the
// mode itself (a full disk, an unwritable folder, an API server that refuses
// or is away) is logged and retried every few seconds until it succeeds or
// the key changes; so is a failed prune.
package infra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync/atomic"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/telemetry"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/host"
	"github.com/gatewire/gatewire/services/infra/issuer"
	"github.com/gatewire/gatewire/services/infra/kubemode"
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
	cfg     Config
	bus     *bus.Bus
	log     *slog.Logger
	prov    provisioner
	host    *host.Provisioner // host mode only
	kube    kubemode.Cluster  // kubernetes mode only
	ready   atomic.Bool       // the infra bucket is synced
	metrics *infraMetrics

	// Certificates: nil in the insecure mode; in kubernetes mode set by
	// startTLS once the CA Secret is read.
	issuer   *issuer.Issuer
	xdsStore certs.Store
	// secretsNamespace holds the CA and xds Secrets (kubernetes mode).
	secretsNamespace string

	// Kubernetes mode with leader election.
	election kubemode.Election
	leader   atomic.Pointer[string] // identity of the last leader seen
	leading  atomic.Bool
}

// New checks cfg and returns a Service that provisions from the infra bucket of
// b. In host mode it creates the bootstrap folder; in kubernetes mode it finds
// the API server (see WithKubernetes) but does not contact it yet. A nil log
// discards logs.
func New(cfg Config, b *bus.Bus, log *slog.Logger, opts ...Option) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, errors.New("infra: nil bus")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := options{Providers: telemetry.Global()}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	s := &Service{cfg: cfg, bus: b, log: log, metrics: newMetrics(o.Meters)}
	cfg.warnInsecure(log)
	switch cfg.Mode {
	case ModeKubernetes:
		if err := s.newKube(o); err != nil {
			return nil, err
		}
	case ModeHost:
		var iss *issuer.Issuer
		if !cfg.XDSInsecure {
			var err error
			if iss, err = newHostIssuer(cfg, s); err != nil {
				return nil, err
			}
		}
		prov, err := newHost(cfg, iss, log)
		if err != nil {
			return nil, err
		}
		s.prov, s.host = prov, prov
	}
	return s, nil
}

func newHost(cfg Config, iss *issuer.Issuer, log *slog.Logger) (*host.Provisioner, error) {
	envoy := cfg.EnvoyPath
	if envoy != "" {
		var err error
		if envoy, err = exec.LookPath(envoy); err != nil {
			return nil, fmt.Errorf("GATEWIRE_INFRA_ENVOY_PATH: %w", err)
		}
	}
	prov, err := host.New(host.Options{
		Dir:        cfg.BootstrapDir,
		XDSAddress: cfg.xdsAddress(),
		AdminPort:  uint32(cfg.AdminPort),
		EnvoyPath:  envoy,
		Issuer:     iss,
	}, log)
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_INFRA_BOOTSTRAP_DIR: %w", err)
	}
	return prov, nil
}

func (s *Service) newKube(o options) error {
	if o.kubernetes == nil {
		return fmt.Errorf("GATEWIRE_INFRA_MODE: %q: this binary has the %q mode only; run infra (or gatewire standalone), which has both", ModeKubernetes, ModeHost)
	}
	prov, err := o.kubernetes(s.cfg.kubeOptions(s.bus.System()), s.log)
	if err != nil {
		return fmt.Errorf("GATEWIRE_INFRA_MODE=kubernetes: %w", err)
	}
	if !s.cfg.XDSInsecure {
		if s.secretsNamespace, err = s.cfg.secretsNamespace(); err != nil {
			return err
		}
	}
	s.prov, s.kube = prov, prov
	if s.cfg.LeaderElection {
		if s.election, err = s.cfg.election(s.bus.System()); err != nil {
			return err
		}
	}
	return nil
}

// Ready reports whether the infra bucket has been synced once: every gateway
// in it provisioned (or reported) and stale ones removed. A replica that
// stands by for the leader election is ready once it has seen a leader.
func (s *Service) Ready() bool {
	if s.ready.Load() {
		return true
	}
	leader := s.leader.Load()
	return leader != nil && *leader != "" && *leader != s.election.Identity
}

// Leading reports whether this replica writes: in kubernetes mode with leader
// election, while it holds the lease; otherwise while Run runs.
func (s *Service) Leading() bool { return s.leading.Load() }

// BootstrapPath is the absolute path of the bootstrap file of a gateway in host
// mode, whether or not it has been written yet; "" in other modes. It is safe
// for concurrent use.
func (s *Service) BootstrapPath(namespace, name string) string {
	if s.host == nil {
		return ""
	}
	return s.host.Path(namespace, name)
}
