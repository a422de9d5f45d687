package infra_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"
	"k8s.io/client-go/rest"

	"github.com/gatewire/gatewire/services/infra"
	"github.com/gatewire/gatewire/services/infra/kube"
)

var configVars = []string{
	"GATEWIRE_INFRA_MODE", "GATEWIRE_INFRA_XDS_ADDRESS", "GATEWIRE_INFRA_ADMIN_PORT",
	"GATEWIRE_INFRA_BOOTSTRAP_DIR", "GATEWIRE_INFRA_ENVOY_PATH",
	"GATEWIRE_INFRA_NAMESPACE", "GATEWIRE_INFRA_ENVOY_IMAGE", "GATEWIRE_INFRA_REPLICAS",
	"GATEWIRE_INFRA_SERVICE_TYPE", "GATEWIRE_INFRA_READINESS_PORT", "GATEWIRE_INFRA_ENVOY_CPU_REQUEST",
	"GATEWIRE_INFRA_ENVOY_MEMORY_REQUEST", "GATEWIRE_INFRA_LEADER_ELECTION",
	"GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE", "GATEWIRE_INFRA_LEADER_ELECTION_ID",
}

// defaultKubernetes is the kubernetes part of the default config.
var defaultKubernetes = infra.Kubernetes{
	EnvoyImage: "envoyproxy/envoy:distroless-v1.36.2", Replicas: 1, ServiceType: "LoadBalancer",
	ReadinessPort: 19001, CPURequest: "100m", MemoryRequest: "128Mi", LeaderElection: true,
}

// unsetConfig clears the variables of the test's environment for its duration.
func unsetConfig(t *testing.T) {
	for _, v := range configVars {
		t.Setenv(v, "")
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	unsetConfig(t)
	var cfg infra.Config
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	want := infra.Config{
		Mode: "host", AdminPort: 19000, BootstrapDir: ".gatewire/bootstrap", Kubernetes: defaultKubernetes,
	}
	if cfg != want {
		t.Errorf("defaults = %+v, want %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	cfg.Mode = "kubernetes"
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults in kubernetes mode do not validate: %v", err)
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	unsetConfig(t)
	t.Setenv("GATEWIRE_INFRA_XDS_ADDRESS", "xds.gatewire.svc:18000")
	t.Setenv("GATEWIRE_INFRA_ADMIN_PORT", "0")
	t.Setenv("GATEWIRE_INFRA_BOOTSTRAP_DIR", "/var/lib/gatewire")
	var cfg infra.Config
	if err := envconfig.Process("GATEWIRE", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.XDSAddress != "xds.gatewire.svc:18000" || cfg.AdminPort != 0 || cfg.BootstrapDir != "/var/lib/gatewire" {
		t.Errorf("config = %+v", cfg)
	}
}

func TestConfigValidate(t *testing.T) {
	good := infra.Config{Mode: "host", XDSAddress: "127.0.0.1:18000", AdminPort: 19000, BootstrapDir: "b"}
	for variable, edit := range map[string]func(*infra.Config){
		"GATEWIRE_INFRA_MODE":          func(c *infra.Config) { c.Mode = "docker" },
		"GATEWIRE_INFRA_XDS_ADDRESS":   func(c *infra.Config) { c.XDSAddress = "127.0.0.1" },
		"GATEWIRE_INFRA_ADMIN_PORT":    func(c *infra.Config) { c.AdminPort = 65536 },
		"GATEWIRE_INFRA_BOOTSTRAP_DIR": func(c *infra.Config) { c.BootstrapDir = "" },
		"GATEWIRE_INFRA_ENVOY_PATH":    func(c *infra.Config) { c.EnvoyPath = "/nonexistent/envoy" },
	} {
		cfg := good
		edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), variable+":") {
			t.Errorf("%s: Validate() = %v, want an error starting with %s:", variable, err, variable)
		}
	}
}

func TestConfigValidateKubernetes(t *testing.T) {
	good := infra.Config{Mode: "kubernetes", AdminPort: 19000, Kubernetes: defaultKubernetes}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	for variable, edit := range map[string]func(*infra.Config){
		"GATEWIRE_INFRA_ADMIN_PORT":                func(c *infra.Config) { c.AdminPort = 0 },
		"GATEWIRE_INFRA_READINESS_PORT":            func(c *infra.Config) { c.ReadinessPort = 19000 },
		"GATEWIRE_INFRA_NAMESPACE":                 func(c *infra.Config) { c.Namespace = "Gatewire" },
		"GATEWIRE_INFRA_ENVOY_IMAGE":               func(c *infra.Config) { c.EnvoyImage = "" },
		"GATEWIRE_INFRA_REPLICAS":                  func(c *infra.Config) { c.Replicas = -1 },
		"GATEWIRE_INFRA_SERVICE_TYPE":              func(c *infra.Config) { c.ServiceType = "ExternalName" },
		"GATEWIRE_INFRA_ENVOY_CPU_REQUEST":         func(c *infra.Config) { c.CPURequest = "fast" },
		"GATEWIRE_INFRA_ENVOY_MEMORY_REQUEST":      func(c *infra.Config) { c.MemoryRequest = "1 GB" },
		"GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE": func(c *infra.Config) { c.LeaderElectionNamespace = "a.b" },
		"GATEWIRE_INFRA_LEADER_ELECTION_ID":        func(c *infra.Config) { c.LeaderElectionID = "Infra" },
	} {
		cfg := good
		edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), variable+":") {
			t.Errorf("%s: Validate() = %v, want an error starting with %s:", variable, err, variable)
		}
	}
}

func TestNewKubernetesWithoutLeaseNamespace(t *testing.T) {
	cfg := infra.Config{Mode: "kubernetes", AdminPort: 19000, Kubernetes: defaultKubernetes, TLS: infra.TLS{SecretsNamespace: "gatewire-system"}}
	_, err := infra.New(cfg, newBus(t), nil, infra.WithKubernetes(kube.Connect(&rest.Config{Host: "https://127.0.0.1:1"})))
	if err == nil || !strings.HasPrefix(err.Error(), "GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE:") {
		t.Errorf("New(kubernetes) outside a pod = %v, want an error naming GATEWIRE_INFRA_LEADER_ELECTION_NAMESPACE", err)
	}
	cfg.TLS.SecretsNamespace = ""
	_, err = infra.New(cfg, newBus(t), nil, infra.WithKubernetes(kube.Connect(&rest.Config{Host: "https://127.0.0.1:1"})))
	if err == nil || !strings.HasPrefix(err.Error(), "GATEWIRE_INFRA_SECRETS_NAMESPACE:") {
		t.Errorf("New(kubernetes) outside a pod without a secrets namespace = %v, want an error naming GATEWIRE_INFRA_SECRETS_NAMESPACE", err)
	}
}

// TestKubernetesModeNeedsIt checks that a service built without the
// kubernetes mode (cmd/infra-host) says so when asked for it.
func TestKubernetesModeNeedsIt(t *testing.T) {
	cfg := infra.Config{Mode: "kubernetes", AdminPort: 19000, Kubernetes: defaultKubernetes, TLS: infra.TLS{SecretsNamespace: "gatewire-system"}}
	_, err := infra.New(cfg, newBus(t), nil)
	if err == nil || err.Error() != `GATEWIRE_INFRA_MODE: "kubernetes": this binary has the "host" mode only; run infra (or gatewire standalone), which has both` {
		t.Errorf("New in kubernetes mode without WithKubernetes: %v", err)
	}
	if _, err := infra.New(cfg, newBus(t), nil, infra.WithKubernetes(nil)); err == nil {
		t.Error("WithKubernetes(nil): no error")
	}
}

func TestConfigValidateTLS(t *testing.T) {
	good := infra.Config{Mode: "host", XDSAddress: "127.0.0.1:18000", AdminPort: 19000, BootstrapDir: "b"}
	for variable, edit := range map[string]func(*infra.Config){
		"GATEWIRE_TRUST_DOMAIN":            func(c *infra.Config) { c.TrustDomain = "Gatewire.Local" },
		"GATEWIRE_INFRA_CERT_LIFETIME":     func(c *infra.Config) { c.CertLifetime = time.Minute },
		"GATEWIRE_INFRA_XDS_SERVER_NAMES":  func(c *infra.Config) { c.XDSServerNames = "ok.example, not_a_name" },
		"GATEWIRE_INFRA_CA_SECRET":         func(c *infra.Config) { c.CASecret = "CA" },
		"GATEWIRE_INFRA_XDS_TLS_SECRET":    func(c *infra.Config) { c.XDSTLSSecret = "a/b" },
		"GATEWIRE_INFRA_SECRETS_NAMESPACE": func(c *infra.Config) { c.SecretsNamespace = "a.b" },
	} {
		cfg := good
		edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), variable+":") {
			t.Errorf("%s: Validate() = %v, want an error starting with %s:", variable, err, variable)
		}
		cfg.XDSInsecure = true
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s with GATEWIRE_XDS_INSECURE=true: %v (certificates are not used)", variable, err)
		}
	}
}

func TestXDSCertNames(t *testing.T) {
	for addr, want := range map[string][]string{
		"gatewire-xds.gatewire-system.svc.cluster.local:18000": {
			"gatewire-xds.gatewire-system.svc.cluster.local", "gatewire-xds.gatewire-system.svc",
			"gatewire-xds.gatewire-system", "gatewire-xds",
		},
		"gatewire-xds.gatewire-system.svc:18000": {"gatewire-xds.gatewire-system.svc", "gatewire-xds.gatewire-system", "gatewire-xds"},
		"xds.example.com:443":                    {"xds.example.com"},
		"127.0.0.1:18000":                        nil,
	} {
		cfg := infra.Config{Mode: "host", XDSAddress: addr}
		if got := cfg.XDSCertNames(); !slices.Equal(got, want) {
			t.Errorf("%s: names %v, want %v", addr, got, want)
		}
	}
	cfg := infra.Config{Mode: "host", XDSAddress: "127.0.0.1:18000", TLS: infra.TLS{XDSServerNames: "a.example, b.example"}}
	if got := cfg.XDSCertNames(); !slices.Equal(got, []string{"a.example", "b.example"}) {
		t.Errorf("extra names %v", got)
	}
}
