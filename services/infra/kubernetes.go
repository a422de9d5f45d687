package infra

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/metric"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gatewire/gatewire/pkg/telemetry"
	"github.com/gatewire/gatewire/services/infra/kubemode"
)

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Option changes how New builds a Service.
type Option func(*options) error

type options struct {
	kubernetes kubemode.Connect
	telemetry.Providers
}

// WithKubernetes gives the Service its kubernetes mode, c: kube.Connect(nil)
// for the API server kubectl would use, kube.Connect(cfg) for the one of a
// rest.Config. Without it, GATEWIRE_INFRA_MODE=kubernetes is an error: this
// package does not import package kube, so that a binary of the host mode
// alone (cmd/infra-host) links no Kubernetes client.
func WithKubernetes(c kubemode.Connect) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("infra: WithKubernetes: nil")
		}
		o.kubernetes = c
		return nil
	}
}

// WithMeterProvider records the service's metrics with p instead of the
// global OpenTelemetry meter provider (see pkg/telemetry).
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(o *options) error { return o.SetMeters("infra: WithMeterProvider", p) }
}

func (c Config) validateKubernetes() error {
	k := c.Kubernetes
	if c.AdminPort == 0 {
		return errors.New("GATEWIRE_INFRA_ADMIN_PORT: 0: kubernetes mode needs a fixed port, the upstream of the readiness listener")
	}
	if k.ReadinessPort < 1 || k.ReadinessPort > 65535 || k.ReadinessPort == c.AdminPort {
		return fmt.Errorf("GATEWIRE_INFRA_READINESS_PORT: %d: want 1-65535, not the admin port", k.ReadinessPort)
	}
	if k.Namespace != "" {
		if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_INFRA_NAMESPACE: %q: %s", k.Namespace, strings.Join(errs, "; "))
		}
	}
	if k.EnvoyImage == "" {
		return errors.New("GATEWIRE_INFRA_ENVOY_IMAGE: empty")
	}
	if k.Replicas < 0 || k.Replicas > 1000 {
		return fmt.Errorf("GATEWIRE_INFRA_REPLICAS: %d: want 0-1000", k.Replicas)
	}
	if err := kubemode.CheckServiceType(k.ServiceType); err != nil {
		return fmt.Errorf("GATEWIRE_INFRA_SERVICE_TYPE: %w", err)
	}
	if _, err := resource.ParseQuantity(k.CPURequest); err != nil {
		return fmt.Errorf("GATEWIRE_INFRA_ENVOY_CPU_REQUEST: %q: %w", k.CPURequest, err)
	}
	if _, err := resource.ParseQuantity(k.MemoryRequest); err != nil {
		return fmt.Errorf("GATEWIRE_INFRA_ENVOY_MEMORY_REQUEST: %q: %w", k.MemoryRequest, err)
	}
	if k.LeaderElectionNamespace != "" {
		if errs := validation.IsDNS1123Label(k.LeaderElectionNamespace); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE: %q: %s", k.LeaderElectionNamespace, strings.Join(errs, "; "))
		}
	}
	if k.LeaderElectionID != "" {
		if errs := validation.IsDNS1123Subdomain(k.LeaderElectionID); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_INFRA_LEADER_ELECTION_ID: %q: %s", k.LeaderElectionID, strings.Join(errs, "; "))
		}
	}
	return nil
}

// kubeOptions are the provisioner options of a checked config.
func (c Config) kubeOptions(system string) kubemode.Options {
	return kubemode.Options{
		System:        system,
		Namespace:     c.Namespace,
		XDSAddress:    c.xdsAddress(),
		AdminPort:     uint32(c.AdminPort),
		ReadinessPort: uint32(c.ReadinessPort),
		Image:         c.EnvoyImage,
		Replicas:      int32(c.Replicas),
		ServiceType:   c.ServiceType,
		CPURequest:    resource.MustParse(c.CPURequest),
		MemoryRequest: resource.MustParse(c.MemoryRequest),
	}
}

// election is the Lease of a checked config.
func (c Config) election(system string) (kubemode.Election, error) {
	e := kubemode.Election{Namespace: c.LeaderElectionNamespace, Name: c.LeaderElectionID}
	if e.Name == "" {
		e.Name = system + "-infra"
		if errs := validation.IsDNS1123Subdomain(e.Name); len(errs) > 0 {
			return e, fmt.Errorf("GATEWIRE_INFRA_LEADER_ELECTION_ID: empty, and %q (from the system name) is not a Lease name; set it", e.Name)
		}
	}
	if e.Namespace == "" {
		ns, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return e, fmt.Errorf("GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE: empty, and not in a pod: %w", err)
		}
		e.Namespace = strings.TrimSpace(string(ns))
	}
	host, err := os.Hostname()
	if err != nil {
		return e, fmt.Errorf("leader election identity: %w", err)
	}
	e.Identity = host + "_" + strings.ToLower(rand.Text()[:10])
	return e, nil
}
