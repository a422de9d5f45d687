package provider

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// Config is the provider's configuration, loaded from the environment with
// the prefix GATEWIRE_.
type Config struct {
	Mode string `envconfig:"PROVIDER_MODE" default:"file" desc:"where resources come from: file (a folder of manifests) or kubernetes (a cluster, with status written back)"`
	// Dir is relative to the working directory; the default suits running
	// from a checkout of the repository.
	Dir string `envconfig:"PROVIDER_DIR" default:"examples/quickstart" desc:"file mode: the folder of YAML/JSON manifests to publish, subfolders included"`
	// MaxFileBytes is checked before a file is read.
	MaxFileBytes int64 `envconfig:"PROVIDER_MAX_FILE_BYTES" default:"4194304" desc:"file mode: the largest manifest file read, in bytes; a larger file is refused as a problem naming it, and its last good content kept"`

	Namespaces []string `envconfig:"PROVIDER_NAMESPACES" default:"" desc:"kubernetes mode: comma-separated namespaces to watch; empty for all"`
	// Config is the controller name (GATEWIRE_CONTROLLER_NAME), shared with
	// the translator: in kubernetes mode the provider publishes only the
	// GatewayClasses that name it, and owns the status entries that carry
	// it.
	gatewayclass.Config
	LeaderElection bool          `envconfig:"PROVIDER_LEADER_ELECTION" default:"true" desc:"kubernetes mode: elect one replica to write status, with a Lease"`
	LeaseName      string        `envconfig:"PROVIDER_LEASE_NAME" default:"" desc:"kubernetes mode: the Lease of the election; empty for <GATEWIRE_SYSTEM>-provider"`
	LeaseNamespace string        `envconfig:"PROVIDER_LEASE_NAMESPACE" default:"" desc:"kubernetes mode: the namespace of the Lease; empty for the provider's own (in a cluster only)"`
	LeaseDuration  time.Duration `envconfig:"PROVIDER_LEASE_DURATION" default:"15s" desc:"kubernetes mode: how long a Lease of a replica that died keeps others waiting"`
	RenewDeadline  time.Duration `envconfig:"PROVIDER_LEASE_RENEW_DEADLINE" default:"10s" desc:"kubernetes mode: how long the leader tries to renew its Lease before it gives up writing status"`
	RetryPeriod    time.Duration `envconfig:"PROVIDER_LEASE_RETRY_PERIOD" default:"2s" desc:"kubernetes mode: how often replicas try to take or renew the Lease"`
}

// Validate reports the first bad setting, naming its variable.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch c.Mode {
	case ModeFile:
		if c.Dir == "" {
			return errors.New("GATEWIRE_PROVIDER_DIR: empty; name the folder of manifests to publish")
		}
		st, err := os.Stat(c.Dir)
		if err != nil {
			return fmt.Errorf("GATEWIRE_PROVIDER_DIR: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("GATEWIRE_PROVIDER_DIR: %s is not a folder", c.Dir)
		}
		if c.MaxFileBytes < 0 {
			return fmt.Errorf("GATEWIRE_PROVIDER_MAX_FILE_BYTES: %d is not a positive number of bytes (0 is the default, 4 MiB)", c.MaxFileBytes)
		}
	case ModeKubernetes:
		return c.validateKubernetes()
	default:
		return fmt.Errorf("GATEWIRE_PROVIDER_MODE: %q is not a mode; use %q or %q", c.Mode, ModeFile, ModeKubernetes)
	}
	return nil
}

// validateKubernetes checks the settings of the kubernetes mode.
func (c Config) validateKubernetes() error {
	for _, ns := range c.WatchedNamespaces() {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_PROVIDER_NAMESPACES: %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(c.LeaseName); c.LeaseName != "" && len(errs) > 0 {
		return fmt.Errorf("GATEWIRE_PROVIDER_LEASE_NAME: %q: %s", c.LeaseName, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(c.LeaseNamespace); c.LeaseNamespace != "" && len(errs) > 0 {
		return fmt.Errorf("GATEWIRE_PROVIDER_LEASE_NAMESPACE: %q: %s", c.LeaseNamespace, strings.Join(errs, "; "))
	}
	switch {
	case c.RetryPeriod <= 0:
		return fmt.Errorf("GATEWIRE_PROVIDER_LEASE_RETRY_PERIOD: %s is not positive", c.RetryPeriod)
	case c.RenewDeadline*10 <= c.RetryPeriod*12: // client-go's leader election wants it past 1.2 retry periods
		return fmt.Errorf("GATEWIRE_PROVIDER_LEASE_RENEW_DEADLINE: %s must exceed 1.2 × GATEWIRE_PROVIDER_LEASE_RETRY_PERIOD (%s)", c.RenewDeadline, c.RetryPeriod)
	case c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("GATEWIRE_PROVIDER_LEASE_DURATION: %s must exceed GATEWIRE_PROVIDER_LEASE_RENEW_DEADLINE (%s)", c.LeaseDuration, c.RenewDeadline)
	}
	return nil
}

// WatchedNamespaces returns the namespaces to watch in kubernetes mode,
// spaces trimmed and empty items dropped; nil for all.
func (c Config) WatchedNamespaces() []string {
	var out []string
	for _, ns := range c.Namespaces {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// serviceAccountNamespace is where Kubernetes writes the namespace of a pod.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ElectionNamespace returns the namespace of the Lease of the leader
// election: GATEWIRE_PROVIDER_LEASE_NAMESPACE, or the pod's namespace when it
// is empty and there is an election.
func (c Config) ElectionNamespace() (string, error) {
	if c.LeaseNamespace != "" || !c.LeaderElection {
		return c.LeaseNamespace, nil
	}
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", fmt.Errorf("GATEWIRE_PROVIDER_LEASE_NAMESPACE: empty, and not running in a cluster (%w); name the namespace of the Lease, or set GATEWIRE_PROVIDER_LEADER_ELECTION=false", err)
	}
	return strings.TrimSpace(string(data)), nil
}
