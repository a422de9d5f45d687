package certs_test

import (
	"crypto/x509"
	"os"
	"testing"

	"github.com/gatewire/gatewire/pkg/certs"
)

type x509Cert = x509.Certificate

// writeFile replaces path with data through a rename, as certificate
// writers do.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// withCA makes files verify their peers with ca (a client of another CA
// that still trusts the server).
func withCA(t *testing.T, files certs.Files, ca *certs.CA) certs.Files {
	t.Helper()
	writeFile(t, files.CA, ca.TrustBundle())
	return files
}
