package infra_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kelseyhightower/envconfig"

	"github.com/gatewire/gatewire/services/infra"
)

var configVars = []string{
	"GATEWIRE_INFRA_MODE", "GATEWIRE_INFRA_XDS_ADDRESS", "GATEWIRE_INFRA_ADMIN_PORT",
	"GATEWIRE_INFRA_BOOTSTRAP_DIR", "GATEWIRE_INFRA_ENVOY_PATH",
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
		Mode: "host", XDSAddress: "127.0.0.1:18000", AdminPort: 19000, BootstrapDir: ".gatewire/bootstrap",
	}
	if cfg != want {
		t.Errorf("defaults = %+v, want %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
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

func TestNewKubernetesNotImplemented(t *testing.T) {
	cfg := infra.Config{Mode: "kubernetes", XDSAddress: "127.0.0.1:18000", AdminPort: 19000}
	_, err := infra.New(cfg, newBus(t), nil)
	if !errors.Is(err, infra.ErrNotImplemented) || !strings.Contains(err.Error(), "GATEWIRE_INFRA_MODE") {
		t.Errorf("New(kubernetes) = %v, want ErrNotImplemented naming GATEWIRE_INFRA_MODE", err)
	}
}
