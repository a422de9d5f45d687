package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/services/infra/bootstrap"
)

// The files of a gateway's certificate folder besides the certificate's
// own (tls.crt, tls.key, ca.crt): the SDS files the bootstrap names.
const (
	certificateSDS = "certificate.sds.json"
	trustedCASDS   = "trusted-ca.sds.json"
	// certDirSuffix ends the name of a gateway's certificate folder.
	certDirSuffix = ".tls"
)

// CertDir is the certificate folder of a gateway in dir:
// <dir>/<namespace>-<name>.tls, beside its bootstrap.
func CertDir(dir, namespace, name string) string {
	return filepath.Join(dir, namespace+"-"+name+certDirSuffix)
}

// CertDir is the certificate folder of a gateway, an absolute path.
func (p *Provisioner) CertDir(namespace, name string) string {
	return CertDir(p.opts.Dir, namespace, name)
}

// bootstrapTLS is the TLS part of a gateway's bootstrap: nil without an
// issuer (the insecure mode).
func (p *Provisioner) bootstrapTLS(namespace, name string) *bootstrap.TLS {
	if p.opts.Issuer == nil {
		return nil
	}
	return BootstrapTLS(p.opts.Dir, namespace, name, p.opts.Issuer.ServerID())
}

// BootstrapTLS is the TLS part of the bootstrap of a gateway whose files
// are in the bootstrap folder dir: the SDS files of its certificate folder,
// and the SPIFFE ID the xds server must present.
func BootstrapTLS(dir, namespace, name, serverID string) *bootstrap.TLS {
	cd := CertDir(dir, namespace, name)
	return &bootstrap.TLS{
		CertificateSDS: filepath.Join(cd, certificateSDS),
		TrustedCASDS:   filepath.Join(cd, trustedCASDS),
		ServerID:       serverID,
	}
}

// ensureCerts writes the certificate folder of a gateway: its SDS files and
// its certificate, issued or renewed by the issuer. It refuses a folder
// whose bootstrap belongs to another gateway (see the package doc on
// ambiguous names).
func (p *Provisioner) ensureCerts(ctx context.Context, namespace, name string) error {
	if p.opts.Issuer == nil {
		return nil
	}
	gateway := bootstrap.NodeCluster(namespace, name)
	owner, err := fileOwner(p.Path(namespace, name))
	if err == nil && owner != gateway {
		return fmt.Errorf("certificate folder %s belongs to %q, not to gateway %s; remove it or rename a gateway",
			p.CertDir(namespace, name), owner, gateway)
	}
	dir := p.CertDir(namespace, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certificate folder: %w", err)
	}
	cert, ca, err := bootstrap.SDSFiles(dir)
	if err != nil {
		return err
	}
	for file, content := range map[string][]byte{certificateSDS: cert, trustedCASDS: ca} {
		if err := writeIfChanged(filepath.Join(dir, file), content); err != nil {
			return err
		}
	}
	return p.opts.Issuer.Gateway(ctx, namespace, name, certs.FileStore{Files: certs.DirFiles(dir)})
}

// writeIfChanged writes data to path atomically unless it holds it.
func writeIfChanged(path string, data []byte) error {
	if have, err := os.ReadFile(path); err == nil && string(have) == string(data) {
		return nil
	}
	return writeAtomic(path, data)
}

// removeCerts removes a gateway's certificate folder; gone is fine.
func (p *Provisioner) removeCerts(namespace, name string) error {
	if p.opts.Issuer != nil {
		p.opts.Issuer.Forget(namespace, name)
	}
	if err := os.RemoveAll(p.CertDir(namespace, name)); err != nil {
		return fmt.Errorf("remove certificate folder: %w", err)
	}
	return nil
}

// pruneCertDir removes a certificate folder whose bootstrap is gone.
func (p *Provisioner) pruneCertDir(dir string) error {
	bootstrapPath := strings.TrimSuffix(dir, certDirSuffix) + ".yaml"
	if _, err := os.Stat(bootstrapPath); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("prune certificate folder: %w", err)
	}
	return nil
}
