// Package certstest makes CAs and certificates of package certs for tests:
// in memory, or written to a test's temporary folders.
package certstest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
)

// TrustDomain is the trust domain of the identities this package makes.
const TrustDomain = certs.DefaultTrustDomain

// CA creates a new CA named name.
func CA(t testing.TB, name string) *certs.CA {
	t.Helper()
	ca, err := certs.NewCA(name, 0, time.Now())
	if err != nil {
		t.Fatalf("certstest: CA: %v", err)
	}
	return ca
}

// Issue issues req from ca, valid from now.
func Issue(t testing.TB, ca *certs.CA, req certs.Request) *certs.Bundle {
	t.Helper()
	b, err := ca.Issue(req, time.Now())
	if err != nil {
		t.Fatalf("certstest: issue %s: %v", req, err)
	}
	return b
}

// Write writes b as tls.crt, tls.key and ca.crt into dir (created when
// missing) and returns their paths.
func Write(t testing.TB, dir string, b *certs.Bundle) certs.Files {
	t.Helper()
	files := certs.DirFiles(dir)
	if err := (certs.FileStore{Files: files}).Save(context.Background(), b); err != nil {
		t.Fatalf("certstest: write %s: %v", dir, err)
	}
	return files
}

// Gateway issues the client certificate of gateway namespace/name from ca
// and writes it into a new temporary folder.
func Gateway(t testing.TB, ca *certs.CA, namespace, name string) certs.Files {
	t.Helper()
	id := certs.GatewayID{TrustDomain: TrustDomain, Namespace: namespace, Name: name}
	return Write(t, filepath.Join(t.TempDir(), namespace+"-"+name), Issue(t, ca, certs.GatewayRequest(id, 0)))
}

// XDSServer issues the xds server certificate from ca (for localhost and
// the loopback addresses) and writes it into a new temporary folder.
func XDSServer(t testing.TB, ca *certs.CA) certs.Files {
	t.Helper()
	return Write(t, filepath.Join(t.TempDir(), "xds"), Issue(t, ca, certs.XDSServerRequest(TrustDomain, nil, 0)))
}
