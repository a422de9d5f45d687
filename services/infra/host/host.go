// Package host provisions Envoy on the machine the infra service runs on: one
// bootstrap file per gateway and, when an envoy binary is configured, one Envoy
// process per gateway.
//
// # Files
//
// The bootstrap of gateway <namespace>/<name> is <dir>/<namespace>-<name>.yaml
// (see [Path]). A file is written atomically (a temporary file in the same
// folder, then a rename) and only when its content changes, so its mtime says
// when the bootstrap last changed and an Envoy watching it is not disturbed.
// Its first line names the gateway:
//
//	# gatewire-gateway: <namespace>/<name>
//
// That line is how [Provisioner.Prune] knows which files it owns: it removes
// the files of gateways that are gone and leaves every other file of the folder
// alone. It also guards the one ambiguity of the file name (namespace "a-b"
// with gateway "c", and namespace "a" with gateway "b-c", share a-b-c.yaml):
// the first gateway keeps the file and the other one is reported.
//
// # Certificates
//
// With Options.Issuer (every mode but the insecure one), each gateway also
// has a certificate folder beside its bootstrap, <dir>/<ns>-<name>.tls
// (mode 0700, see [CertDir]): tls.crt and tls.key, the gateway's client
// certificate (spiffe://<trust domain>/ns/<ns>/gateway/<name>), ca.crt,
// and the two SDS files its bootstrap names (certificate.sds.json,
// trusted-ca.sds.json). The folder is written before the bootstrap, so an
// Envoy never starts without it; the issuer renews the certificate in
// place, and Envoy reloads it without a restart. The folder goes with its
// bootstrap.
//
// # Processes
//
// With Options.EnvoyPath set, each gateway with a bootstrap gets an Envoy
// started as
//
//	envoy -c <dir>/<ns>-<name>.yaml --base-id <n> --admin-address-path <dir>/<ns>-<name>.admin
//
// where n is the lowest base id, from 1, not used by another Envoy of this
// provisioner (Envoys on one host need distinct base ids for their shared
// memory). The admin address file tells where the admin interface listens,
// which matters with admin port 0. An Envoy that exits is started again after
// a backoff (1s doubling to 30s); a changed bootstrap restarts it; a removed
// gateway stops it with SIGTERM, and SIGKILL after 10s. Envoy's output goes to
// Options.Output. Several gateways with one fixed admin port cannot all start:
// use admin port 0 then.
//
// A Provisioner is driven by one goroutine: Apply, Remove, Prune and Close must
// not be called concurrently. Path is safe for concurrent use.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// Options configure a Provisioner.
type Options struct {
	// Dir is the folder of the bootstrap files; it is created if missing. A
	// relative folder is taken from the working directory when New is called.
	// Required.
	Dir string
	// XDSAddress is the host:port of the xds service the Envoys connect to.
	// Empty means bootstrap.DefaultXDSAddress.
	XDSAddress string
	// AdminPort is the port of each Envoy's admin interface on 127.0.0.1; 0
	// lets each Envoy pick a free one.
	AdminPort uint32
	// EnvoyPath is the envoy binary to run per gateway; empty writes the
	// files only.
	EnvoyPath string
	// Output receives the output of the Envoy processes; nil means os.Stderr.
	Output io.Writer
	// Issuer issues the client certificate of each gateway into its
	// certificate folder (CertDir), which its bootstrap uses to reach the
	// xds service over mTLS. Nil means plaintext bootstraps, the insecure
	// mode for local development.
	Issuer *issuer.Issuer
}

// Provisioner writes bootstrap files and runs Envoys. See the package doc.
type Provisioner struct {
	opts     Options
	log      *slog.Logger
	instance string      // the host name, the last part of node.id
	procs    *supervisor // nil without an envoy binary
}

// New checks opts, creates the bootstrap folder and returns a Provisioner. A
// nil log discards logs.
func New(opts Options, log *slog.Logger) (*Provisioner, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Dir == "" {
		return nil, errors.New("host: empty bootstrap folder")
	}
	if opts.XDSAddress == "" {
		opts.XDSAddress = bootstrap.DefaultXDSAddress
	}
	if err := bootstrap.CheckXDSAddress(opts.XDSAddress); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if opts.Output == nil {
		opts.Output = os.Stderr
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("host: bootstrap folder: %w", err)
	}
	opts.Dir = dir
	instance, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("host: host name for node.id: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("host: bootstrap folder: %w", err)
	}
	p := &Provisioner{opts: opts, log: log, instance: instance}
	if opts.EnvoyPath != "" {
		p.procs = newSupervisor(opts.EnvoyPath, opts.Output, log)
	}
	return p, nil
}

// Path is the bootstrap file of a gateway in dir: <dir>/<namespace>-<name>.yaml.
func Path(dir, namespace, name string) string {
	return filepath.Join(dir, namespace+"-"+name+".yaml")
}

// Path is the bootstrap file of a gateway, an absolute path.
func (p *Provisioner) Path(namespace, name string) string {
	return Path(p.opts.Dir, namespace, name)
}

// adminAddressPath is where an Envoy writes its admin address.
func (p *Provisioner) adminAddressPath(namespace, name string) string {
	return filepath.Join(p.opts.Dir, namespace+"-"+name+".admin")
}

// Apply writes the certificate folder and the bootstrap of the gateway of
// proxy if they changed, and makes sure its Envoy runs (restarted when the
// bootstrap changed; a renewed certificate needs no restart).
func (p *Provisioner) Apply(ctx context.Context, proxy *busv1.Proxy) error {
	ns, name := proxy.GetNamespace(), proxy.GetName()
	if err := bootstrap.CheckGateway(ns, name); err != nil {
		return err
	}
	if err := p.ensureCerts(ctx, ns, name); err != nil {
		return err
	}
	content, err := p.render(proxy)
	if err != nil {
		return err
	}
	path := p.Path(ns, name)
	changed, err := writeFile(path, bootstrap.NodeCluster(ns, name), content)
	if err != nil {
		return err
	}
	if changed {
		p.log.Info("bootstrap written", "gateway", ns+"/"+name, "path", path)
	}
	if p.procs != nil {
		p.procs.ensure(path, p.envoyArgs(ns, name), changed)
	}
	return nil
}

func (p *Provisioner) render(proxy *busv1.Proxy) ([]byte, error) {
	return Render(p.opts, p.instance, proxy, p.bootstrapTLS(proxy.GetNamespace(), proxy.GetName()))
}

// Render is the bootstrap file a Provisioner with opts on the host named
// instance writes for proxy: node.id <namespace>/<gateway>/<instance>,
// reaching the xds service over mTLS with tls (nil: in plaintext).
func Render(opts Options, instance string, proxy *busv1.Proxy, tls *bootstrap.TLS) ([]byte, error) {
	cluster := proxy.GetNodeCluster()
	if cluster == "" {
		cluster = bootstrap.NodeCluster(proxy.GetNamespace(), proxy.GetName())
	}
	b, err := bootstrap.Render(bootstrap.Options{
		Cluster:    cluster,
		NodeID:     bootstrap.NodeID(cluster, instance),
		XDSAddress: opts.XDSAddress,
		AdminPort:  opts.AdminPort,
		TLS:        tls,
	})
	if err != nil {
		return nil, err
	}
	return bootstrap.MarshalYAML(b)
}

func (p *Provisioner) envoyArgs(namespace, name string) []string {
	return []string{
		"-c", p.Path(namespace, name),
		"--admin-address-path", p.adminAddressPath(namespace, name),
	}
}

// Remove stops the Envoy of a gateway and removes its files. Removing a gateway
// that has no files is not an error.
func (p *Provisioner) Remove(_ context.Context, namespace, name string) error {
	if err := bootstrap.CheckGateway(namespace, name); err != nil {
		return err
	}
	return p.remove(p.Path(namespace, name), namespace+"/"+name)
}

func (p *Provisioner) remove(path, gateway string) error {
	owner, err := fileOwner(path)
	missing := errors.Is(err, os.ErrNotExist)
	if err != nil && !missing {
		return err
	}
	if !missing && owner != gateway {
		// The file is not this gateway's (see the package doc on ambiguous
		// names): leave it and its Envoy alone.
		return nil
	}
	if p.procs != nil {
		p.procs.stop(path) // also when the file was removed by hand
	}
	if ns, name, ok := strings.Cut(gateway, "/"); ok {
		if err := p.removeCerts(ns, name); err != nil {
			return err
		}
	}
	if missing {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove bootstrap: %w", err)
	}
	admin := path[:len(path)-len(".yaml")] + ".admin"
	if err := os.Remove(admin); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove admin address file: %w", err)
	}
	p.log.Info("bootstrap removed", "gateway", gateway, "path", path)
	return nil
}

// Close stops every Envoy and waits for them to exit. The files stay: the next
// Provisioner on the folder finds them and prunes what is stale.
func (p *Provisioner) Close() error {
	if p.procs != nil {
		p.procs.stopAll()
	}
	return nil
}
