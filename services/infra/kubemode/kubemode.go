// Package kubemode is what the infra service knows of its kubernetes mode
// without a Kubernetes client: the provisioner's options and the interface
// of a provisioner that talks to a cluster, Cluster, which package kube
// implements (kube.Connect). The infra package imports this package, not
// package kube, so that a binary of the host mode alone (cmd/infra-host)
// links neither client-go, controller-runtime nor the Kubernetes API types.
package kubemode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gatewire/gatewire/pkg/certs"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// ErrInvalid marks a proxy that cannot be provisioned as it is (a bad port or
// service type): trying again will not help until the proxy changes.
var ErrInvalid = errors.New("invalid proxy")

// Options configure a provisioner. Every field is required unless it says
// otherwise.
type Options struct {
	// System is the installation, the value of the system label.
	System string
	// Namespace holds the objects of every gateway; empty puts them in the
	// namespace of their Gateway.
	Namespace string
	// XDSAddress is the host:port of the xds service for the bootstraps.
	XDSAddress string
	// AdminPort is Envoy's admin port on 127.0.0.1; ReadinessPort serves
	// /ready on every address. Both are non-zero and differ.
	AdminPort, ReadinessPort uint32
	// Image is the Envoy image of a proxy that names none.
	Image string
	// Replicas of a proxy that asks for none; 0 leaves the field to the
	// cluster.
	Replicas int32
	// ServiceType of a proxy that asks for none (see CheckServiceType).
	ServiceType string
	// CPURequest and MemoryRequest are the Envoy container's requests.
	CPURequest, MemoryRequest resource.Quantity
}

// CheckServiceType reports whether t is a Service type that exposes a
// gateway: ClusterIP, NodePort or LoadBalancer.
func CheckServiceType(t string) error {
	switch t {
	case "ClusterIP", "NodePort", "LoadBalancer":
		return nil
	}
	return fmt.Errorf("service type %q: want ClusterIP, NodePort or LoadBalancer", t)
}

// Where a gateway's Envoy container finds its configuration.
const (
	// ConfigDir is where the gateway's ConfigMap is mounted.
	ConfigDir = "/etc/envoy"
	// CertificateSDSKey and TrustedCASDSKey are the keys of the SDS files
	// in a gateway's ConfigMap, beside the bootstrap.
	CertificateSDSKey = "certificate.sds.json"
	TrustedCASDSKey   = "trusted-ca.sds.json"
)

// Bootstrap is the bootstrap of the ConfigMap a provisioner with opts
// makes for the gateway whose node.cluster is cluster, reaching the xds
// service over mTLS with tls (nil: in plaintext).
func Bootstrap(opts Options, cluster string, tls *bootstrap.TLS) ([]byte, error) {
	b, err := bootstrap.Render(bootstrap.Options{
		Cluster:       cluster,
		NodeID:        bootstrap.NodeID(cluster, "pod"),
		XDSAddress:    opts.XDSAddress,
		AdminPort:     opts.AdminPort,
		ReadinessPort: opts.ReadinessPort,
		TLS:           tls,
	})
	if err != nil {
		return nil, err
	}
	return bootstrap.MarshalYAML(b)
}

// BootstrapTLS is the TLS part of the bootstrap of a gateway's Envoys: the
// SDS files of their mounted certificate, and the SPIFFE ID the xds server
// must present.
func BootstrapTLS(serverID string) *bootstrap.TLS {
	return &bootstrap.TLS{
		CertificateSDS: path.Join(ConfigDir, CertificateSDSKey),
		TrustedCASDS:   path.Join(ConfigDir, TrustedCASDSKey),
		ServerID:       serverID,
	}
}

// Addresses are the addresses of one gateway's Service.
type Addresses struct {
	// Namespace and Name are the Gateway's.
	Namespace, Name string
	// Addresses are the load balancer's ingress IPs and host names, in the
	// Service's order, or else its cluster IPs; empty while it has none.
	Addresses []string
	// Gone says the Service was deleted.
	Gone bool
}

// Election names the Lease that elects one active replica and says how it
// is held. Zero durations take the defaults of controller-runtime: a 15s
// lease, renewed within 10s, tried every 2s.
type Election struct {
	// Namespace and Name of the Lease (coordination.k8s.io/v1).
	Namespace, Name string
	// Identity of this replica in the Lease; unique among the replicas.
	Identity string

	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Cluster provisions the gateways of the infra bucket in a cluster: a
// *kube.Provisioner. See package kube for what each method does.
type Cluster interface {
	// Apply creates or updates the objects of the gateway of p.
	Apply(ctx context.Context, p *busv1.Proxy) error
	// Remove removes the objects of a gateway.
	Remove(ctx context.Context, namespace, name string) error
	// Prune removes the objects of the gateways for which keep is false.
	Prune(ctx context.Context, keep func(namespace, name string) bool) error
	// Close releases what the provisioner holds.
	Close() error
	// SecretStore is the certificate bundle in the Secret namespace/name;
	// createOnly never overwrites a Secret that exists.
	SecretStore(namespace, name string, createOnly bool) certs.Store
	// SetIssuer makes Apply issue each gateway's client certificate.
	SetIssuer(i *issuer.Issuer)
	// WatchAddresses reports the addresses of the gateways' Services
	// until ctx is done: every Service, then synced, then every change.
	WatchAddresses(ctx context.Context, report func(Addresses), synced func()) error
	// Elect campaigns for the Lease of e until ctx is done, running lead
	// while this replica holds it; onLeader learns each new leader.
	Elect(ctx context.Context, e Election, log *slog.Logger, lead func(ctx context.Context), onLeader func(identity string)) error
}

// Connect returns a Cluster with opts: kube.Connect. It checks opts and finds
// the API server, but does not contact it.
type Connect func(opts Options, log *slog.Logger) (Cluster, error)
