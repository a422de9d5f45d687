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
	// ModeKubernetes runs Envoy as a Deployment per gateway; not implemented
	// yet.
	ModeKubernetes = "kubernetes"
)

// ErrNotImplemented is returned by New for a mode that is planned but not
// built yet.
var ErrNotImplemented = errors.New("not implemented yet")

// Config is the configuration of the infra service, loaded by envconfig with
// the prefix GATEWIRE_.
type Config struct {
	Mode       string `envconfig:"INFRA_MODE" default:"host" desc:"where Envoy runs: host (bootstrap files, optional envoy processes) or kubernetes (not implemented yet)"`
	XDSAddress string `envconfig:"INFRA_XDS_ADDRESS" default:"127.0.0.1:18000" desc:"host:port of the xds service that the Envoy bootstraps point at; a DNS name or an IP address"`
	AdminPort  int    `envconfig:"INFRA_ADMIN_PORT" default:"19000" desc:"port of each Envoy's admin interface on 127.0.0.1; 0 lets each Envoy pick a free port (needed for several envoy processes on one host)"`
	// BootstrapDir is relative to the working directory unless absolute, so
	// that a gatewire started in a project folder keeps its files there.
	BootstrapDir string `envconfig:"INFRA_BOOTSTRAP_DIR" default:".gatewire/bootstrap" desc:"host mode: folder of the bootstrap files, <namespace>-<gateway>.yaml"`
	EnvoyPath    string `envconfig:"INFRA_ENVOY_PATH" default:"" desc:"host mode: envoy binary (a path, or a name looked up in PATH) to run one Envoy per gateway; empty writes the bootstrap files only"`
}

// Validate checks every variable and names the first bad one.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeHost, ModeKubernetes:
	default:
		return fmt.Errorf("GATEWIRE_INFRA_MODE: %q: want %q or %q", c.Mode, ModeHost, ModeKubernetes)
	}
	if err := bootstrap.CheckXDSAddress(c.XDSAddress); err != nil {
		return fmt.Errorf("GATEWIRE_INFRA_XDS_ADDRESS: %w", err)
	}
	if c.AdminPort < 0 || c.AdminPort > 65535 {
		return fmt.Errorf("GATEWIRE_INFRA_ADMIN_PORT: %d: want 0-65535", c.AdminPort)
	}
	if c.Mode != ModeHost {
		return nil
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
