package infra

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/gatewire/gatewire/services/infra/bootstrap"
)

// The modes of the infra service.
const (
	// ModeHost writes a bootstrap file per gateway and, with an envoy binary,
	// runs an Envoy per gateway on this machine.
	ModeHost = "host"
	// ModeKubernetes runs Envoy as a Deployment per gateway (package kube).
	ModeKubernetes = "kubernetes"
)

// The xds address of each mode when GATEWIRE_INFRA_XDS_ADDRESS is empty: the
// xds service on this host, or the Service gatewire-xds in the namespace
// gatewire-system that deploy/k8s installs.
const (
	DefaultHostXDSAddress       = bootstrap.DefaultXDSAddress
	DefaultKubernetesXDSAddress = "gatewire-xds.gatewire-system.svc:18000"
)

// Config is the configuration of the infra service, loaded by envconfig with
// the prefix GATEWIRE_.
type Config struct {
	Mode       string `envconfig:"INFRA_MODE" default:"host" desc:"where Envoy runs: host (bootstrap files, optional envoy processes) or kubernetes (a Deployment per gateway)"`
	XDSAddress string `envconfig:"INFRA_XDS_ADDRESS" default:"" desc:"host:port of the xds service that the Envoy bootstraps point at, a DNS name or an IP address; empty means 127.0.0.1:18000 in host mode and gatewire-xds.gatewire-system.svc:18000 in kubernetes mode"`
	AdminPort  int    `envconfig:"INFRA_ADMIN_PORT" default:"19000" desc:"port of each Envoy's admin interface on 127.0.0.1; 0 lets each Envoy pick a free port (host mode only; needed for several envoy processes on one host)"`
	// BootstrapDir is relative to the working directory unless absolute, so
	// that a gatewire started in a project folder keeps its files there.
	BootstrapDir string `envconfig:"INFRA_BOOTSTRAP_DIR" default:".gatewire/bootstrap" desc:"host mode: folder of the bootstrap files, <namespace>-<gateway>.yaml"`
	EnvoyPath    string `envconfig:"INFRA_ENVOY_PATH" default:"" desc:"host mode: envoy binary (a path, or a name looked up in PATH) to run one Envoy per gateway; empty writes the bootstrap files only"`

	Kubernetes
	TLS
}

// Kubernetes is the part of Config that only kubernetes mode reads. The API
// server is found as kubectl finds it: KUBECONFIG, ~/.kube/config, or the
// service account of the pod.
type Kubernetes struct {
	Namespace     string `envconfig:"INFRA_NAMESPACE" default:"" desc:"kubernetes mode: namespace of the Envoy objects of every gateway; empty puts them in the namespace of their Gateway, owned by it"`
	EnvoyImage    string `envconfig:"INFRA_ENVOY_IMAGE" default:"envoyproxy/envoy:distroless-v1.36.2" desc:"kubernetes mode: Envoy image of a gateway that names none"`
	Replicas      int    `envconfig:"INFRA_REPLICAS" default:"1" desc:"kubernetes mode: Envoy replicas of a gateway that asks for none; 0 leaves the count to the cluster (an autoscaler)"`
	ServiceType   string `envconfig:"INFRA_SERVICE_TYPE" default:"LoadBalancer" desc:"kubernetes mode: type of the Service of a gateway that asks for none: ClusterIP, NodePort or LoadBalancer"`
	ReadinessPort int    `envconfig:"INFRA_READINESS_PORT" default:"19001" desc:"kubernetes mode: port on which each Envoy answers GET /ready, the target of the readiness probe"`
	CPURequest    string `envconfig:"INFRA_ENVOY_CPU_REQUEST" default:"100m" desc:"kubernetes mode: CPU request of each Envoy container"`
	MemoryRequest string `envconfig:"INFRA_ENVOY_MEMORY_REQUEST" default:"128Mi" desc:"kubernetes mode: memory request of each Envoy container"`

	LeaderElection          bool   `envconfig:"INFRA_LEADER_ELECTION" default:"true" desc:"kubernetes mode: elect one active replica with a Lease"`
	LeaderElectionNamespace string `envconfig:"INFRA_LEADER_ELECTION_NAMESPACE" default:"" desc:"kubernetes mode: namespace of the Lease; empty means the namespace of the pod"`
	LeaderElectionID        string `envconfig:"INFRA_LEADER_ELECTION_ID" default:"" desc:"kubernetes mode: name of the Lease; empty means <system>-infra"`
}

// Validate checks every variable and names the first bad one.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeHost, ModeKubernetes:
	default:
		return fmt.Errorf("GATEWIRE_INFRA_MODE: %q: want %q or %q", c.Mode, ModeHost, ModeKubernetes)
	}
	if c.XDSAddress != "" {
		if err := bootstrap.CheckXDSAddress(c.XDSAddress); err != nil {
			return fmt.Errorf("GATEWIRE_INFRA_XDS_ADDRESS: %w", err)
		}
	}
	if err := c.TLS.validate(); err != nil {
		return err
	}
	if c.AdminPort < 0 || c.AdminPort > 65535 {
		return fmt.Errorf("GATEWIRE_INFRA_ADMIN_PORT: %d: want 0-65535", c.AdminPort)
	}
	if c.Mode == ModeKubernetes {
		return c.validateKubernetes()
	}
	if c.BootstrapDir == "" {
		return errors.New("GATEWIRE_INFRA_BOOTSTRAP_DIR: empty")
	}
	if c.EnvoyPath != "" {
		if _, err := exec.LookPath(c.EnvoyPath); err != nil {
			return fmt.Errorf("GATEWIRE_INFRA_ENVOY_PATH: %w", err)
		}
	}
	return nil
}

// xdsAddress is the xds address of the mode.
func (c Config) xdsAddress() string {
	switch {
	case c.XDSAddress != "":
		return c.XDSAddress
	case c.Mode == ModeKubernetes:
		return DefaultKubernetesXDSAddress
	}
	return DefaultHostXDSAddress
}
