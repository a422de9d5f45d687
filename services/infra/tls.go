package infra

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// Defaults of the TLS part of Config, for fields left empty.
const (
	DefaultCASecret     = "gatewire-ca"
	DefaultXDSTLSSecret = "gatewire-xds-tls"
	// renewEvery is how often certificates are checked for renewal.
	renewEvery = time.Minute
)

// TLS is the part of Config about the certificates infra issues: the
// client certificate of every gateway's Envoys, which its bootstrap uses to
// reach the xds service over mTLS, and the xds server's own. Empty fields
// take the defaults their descriptions give, so a Config written in Go
// needs none of them.
type TLS struct {
	// XDSTransport is what the xds service shares: XDSInsecure makes the
	// bootstraps reach it in plaintext, with no certificate issued;
	// TrustDomain is the trust domain of the certificates' SPIFFE IDs.
	certs.XDSTransport
	CertLifetime   time.Duration `envconfig:"INFRA_CERT_LIFETIME" default:"0" desc:"lifetime of the xds server's and the gateways' certificates, renewed at two thirds; 0 means 168h (7 days)"`
	XDSServerNames string        `envconfig:"INFRA_XDS_SERVER_NAMES" default:"" desc:"more DNS names for the xds server's certificate, comma-separated; the host of the xds address is always in it"`
	// Host mode.
	CADir     string `envconfig:"INFRA_CA_DIR" default:"" desc:"host mode: folder of the CA (tls.crt, tls.key, ca.crt), created when missing; empty means ca beside the bootstrap folder"`
	XDSTLSDir string `envconfig:"INFRA_XDS_TLS_DIR" default:"" desc:"host mode: folder where the xds server's certificate is written (tls.crt, tls.key, ca.crt); empty means xds-tls beside the bootstrap folder"`
	// Kubernetes mode.
	SecretsNamespace string `envconfig:"INFRA_SECRETS_NAMESPACE" default:"" desc:"kubernetes mode: namespace of the CA and xds server Secrets; empty means the namespace of the pod"`
	CASecret         string `envconfig:"INFRA_CA_SECRET" default:"" desc:"kubernetes mode: Secret of the CA (kubernetes.io/tls), created when missing; empty means gatewire-ca"`
	XDSTLSSecret     string `envconfig:"INFRA_XDS_TLS_SECRET" default:"" desc:"kubernetes mode: Secret the xds server's certificate is written to; empty means gatewire-xds-tls"`
}

func (t TLS) validate() error {
	if t.XDSInsecure {
		return nil
	}
	if err := t.XDSTransport.Validate(); err != nil {
		return err
	}
	if t.CertLifetime != 0 && t.CertLifetime < certs.MinLifetime {
		return fmt.Errorf("GATEWIRE_INFRA_CERT_LIFETIME: %s: want at least %s", t.CertLifetime, certs.MinLifetime)
	}
	for _, n := range t.serverNames() {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_INFRA_XDS_SERVER_NAMES: %q: %s", n, strings.Join(errs, "; "))
		}
	}
	for variable, name := range map[string]string{"GATEWIRE_INFRA_CA_SECRET": t.CASecret, "GATEWIRE_INFRA_XDS_TLS_SECRET": t.XDSTLSSecret} {
		if name == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("%s: %q: %s", variable, name, strings.Join(errs, "; "))
		}
	}
	if t.SecretsNamespace != "" {
		if errs := validation.IsDNS1123Label(t.SecretsNamespace); len(errs) > 0 {
			return fmt.Errorf("GATEWIRE_INFRA_SECRETS_NAMESPACE: %q: %s", t.SecretsNamespace, strings.Join(errs, "; "))
		}
	}
	return nil
}

func (t TLS) serverNames() []string {
	var out []string
	for _, n := range strings.Split(t.XDSServerNames, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// caDir and xdsTLSDir are the host mode folders, absolute.
func (c Config) caDir() (string, error)     { return c.sibling(c.CADir, "ca") }
func (c Config) xdsTLSDir() (string, error) { return c.sibling(c.XDSTLSDir, "xds-tls") }

func (c Config) sibling(dir, name string) (string, error) {
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(c.BootstrapDir)), name)
	}
	return filepath.Abs(dir)
}

// XDSCertNames are the DNS names of the xds server's certificate: the
// host of the xds address the bootstraps point at (when it is a name, with
// the shorter forms of a Kubernetes Service name: gatewire-xds,
// gatewire-xds.<namespace>, gatewire-xds.<namespace>.svc) and
// GATEWIRE_INFRA_XDS_SERVER_NAMES. localhost and the loopback addresses are
// added by package certs.
func (c Config) XDSCertNames() []string {
	host, _, err := net.SplitHostPort(c.xdsAddress())
	var names []string
	if err == nil && net.ParseIP(host) == nil {
		names = append(names, host)
		base := strings.TrimSuffix(host, ".cluster.local")
		if service, ok := strings.CutSuffix(base, ".svc"); ok {
			if svc, ns, ok := strings.Cut(service, "."); ok && !strings.Contains(ns, ".") {
				for _, n := range []string{service + ".svc", service, svc} {
					names = appendUnique(names, n)
				}
			}
		}
	}
	for _, n := range c.serverNames() {
		names = appendUnique(names, n)
	}
	return names
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// HostCA returns the CA of host mode, creating it in its folder on first
// use. gatewire standalone calls it too, so that the xds server it starts
// has its certificate before infra runs.
func (c Config) HostCA(now time.Time) (*certs.CA, error) {
	dir, err := c.caDir()
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_INFRA_CA_DIR: %w", err)
	}
	ca, _, err := certs.EnsureCA(context.Background(), certs.FileStore{Files: certs.DirFiles(dir)}, "gatewire CA", 0, now)
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_INFRA_CA_DIR %s: %w", dir, err)
	}
	return ca, nil
}

// HostXDSFiles are the files of the xds server's certificate in host mode:
// what the xds server reads (see package certs, ServerConfig).
func (c Config) HostXDSFiles() (certs.Files, error) {
	dir, err := c.xdsTLSDir()
	if err != nil {
		return certs.Files{}, fmt.Errorf("GATEWIRE_INFRA_XDS_TLS_DIR: %w", err)
	}
	return certs.DirFiles(dir), nil
}

// NewIssuer is the issuer of ca with the configured trust domain and
// lifetime.
func (c Config) NewIssuer(ca *certs.CA, log *slog.Logger) (*issuer.Issuer, error) {
	return issuer.New(issuer.Options{CA: ca, TrustDomain: c.Domain(), Lifetime: c.CertLifetime}, log)
}

// secretsNamespace is the namespace of the CA and xds Secrets.
func (c Config) secretsNamespace() (string, error) {
	if c.SecretsNamespace != "" {
		return c.SecretsNamespace, nil
	}
	ns, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", fmt.Errorf("GATEWIRE_INFRA_SECRETS_NAMESPACE: empty, and not in a pod: %w", err)
	}
	if s := strings.TrimSpace(string(ns)); s != "" {
		return s, nil
	}
	return "", errors.New("GATEWIRE_INFRA_SECRETS_NAMESPACE: empty, and the pod's namespace file is empty")
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// warnInsecure logs, once at start, that the xds connection is plaintext.
func (c Config) warnInsecure(log *slog.Logger) {
	if c.XDSInsecure {
		log.Warn("GATEWIRE_XDS_INSECURE=true: Envoys reach the xds service in plaintext without certificates; any client that reaches it may read every gateway's configuration, keys included. For local development only")
	}
}
