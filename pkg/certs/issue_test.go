package certs_test

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

func gatewayID(ns, name string) certs.GatewayID {
	return certs.GatewayID{TrustDomain: certs.DefaultTrustDomain, Namespace: ns, Name: name}
}

func TestGatewayCertificate(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	now := time.Now()
	b, err := ca.Issue(certs.GatewayRequest(gatewayID("shop", "edge.v1"), 24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := b.Leaf()
	if err != nil {
		t.Fatal(err)
	}
	roots, err := b.Pool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("gateway certificate does not verify as a client: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a gateway certificate verifies as a server certificate")
	}
	if got := leaf.URIs[0].String(); got != "spiffe://gatewire.local/ns/shop/gateway/edge.v1" {
		t.Errorf("URI SAN %q", got)
	}
	ns, name, err := certs.GatewayOf(leaf)
	if err != nil || ns != "shop" || name != "edge.v1" {
		t.Errorf("GatewayOf = %q, %q, %v", ns, name, err)
	}
	if d := leaf.NotAfter.Sub(now.Add(24 * time.Hour)); d < -time.Second || d > time.Second {
		t.Errorf("valid until %s, want 24h from now", leaf.NotAfter)
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %s, want ECDSA", leaf.PublicKeyAlgorithm)
	}
	if block, _ := pem.Decode(b.Key); block == nil || block.Type != "PRIVATE KEY" {
		t.Errorf("key is not PKCS #8 PEM: %q", b.Key[:min(40, len(b.Key))])
	}
}

func TestXDSServerCertificate(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	b := certstest.Issue(t, ca, certs.XDSServerRequest("example.org", []string{"gatewire-xds.gatewire-system.svc"}, 0))
	leaf, _ := b.Leaf()
	roots, _ := b.Pool()
	for _, host := range []string{"gatewire-xds.gatewire-system.svc", "localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("xds server certificate does not verify for %s: %v", host, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "gatewire-xds.other.svc"}); err == nil {
		t.Error("xds server certificate verifies for a name it does not hold")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the xds server certificate verifies as a client certificate")
	}
	if got := leaf.URIs[0].String(); got != "spiffe://example.org/gatewire/xds" {
		t.Errorf("URI SAN %q", got)
	}
	if _, _, err := certs.GatewayOf(leaf); !errors.Is(err, certs.ErrNoGateway) {
		t.Errorf("GatewayOf(xds server) = %v, want ErrNoGateway", err)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life < certs.DefaultLifetime {
		t.Errorf("default lifetime %s", life)
	}
}

func TestRequestChecks(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	for name, req := range map[string]certs.Request{
		"no usage":       {CommonName: "x", DNSNames: []string{"x"}},
		"no names":       {CommonName: "x", Usage: certs.ServerAuth},
		"short lifetime": {CommonName: "x", DNSNames: []string{"x"}, Usage: certs.ServerAuth, Lifetime: time.Minute},
	} {
		if _, err := ca.Issue(req, time.Now()); err == nil {
			t.Errorf("%s: Issue accepted %+v", name, req)
		}
	}
}

func TestLeafNeverOutlivesCA(t *testing.T) {
	now := time.Now()
	ca, err := certs.NewCA("short CA", 2*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue(certs.GatewayRequest(gatewayID("a", "b"), 30*24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := b.Leaf()
	if leaf.NotAfter.After(ca.Certificate().NotAfter) {
		t.Errorf("leaf valid until %s, after its CA (%s)", leaf.NotAfter, ca.Certificate().NotAfter)
	}
	if _, err := ca.Issue(certs.GatewayRequest(gatewayID("a", "b"), 0), now.Add(3*time.Hour)); err == nil {
		t.Error("an expired CA issued a certificate")
	}
}

func TestParseCA(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	leaf := certstest.Issue(t, ca, certs.GatewayRequest(gatewayID("a", "b"), 0))
	cases := map[string]*certs.Bundle{
		"a leaf is not a CA":      leaf,
		"key of another":          {Cert: ca.Bundle().Cert, Key: leaf.Key},
		"no certificate":          {Cert: []byte("junk"), Key: ca.Bundle().Key},
		"no key":                  {Cert: ca.Bundle().Cert, Key: []byte("-----BEGIN JUNK-----\n-----END JUNK-----\n")},
		"oversized":               {Cert: []byte(strings.Repeat("A", certs.MaxPEMSize+1)), Key: ca.Bundle().Key},
		"bad trust bundle":        {Cert: ca.Bundle().Cert, Key: ca.Bundle().Key, CA: []byte("not pem")},
		"nil bundle is not a CA ": nil,
	}
	for name, b := range cases {
		if _, err := certs.ParseCA(b); err == nil {
			t.Errorf("%s: ParseCA accepted it", name)
		}
	}
	again, err := certs.ParseCA(ca.Bundle())
	if err != nil {
		t.Fatal(err)
	}
	if !again.Certificate().Equal(ca.Certificate()) {
		t.Error("ParseCA(ca.Bundle()) is another CA")
	}
}

// TestIntermediateCA brings a CA of its own, an intermediate of a root
// kept elsewhere (as cert-manager or a company PKI would hand it over):
// leaves carry the intermediate, and verify against the root alone.
func TestIntermediateCA(t *testing.T) {
	root := companyRoot(t)
	inter := intermediate(t, root)
	leaf := certstest.Issue(t, inter, certs.GatewayRequest(gatewayID("a", "b"), 0))
	pair, err := leaf.KeyPair()
	if err != nil {
		t.Fatal(err)
	}
	if len(pair.Certificate) != 2 {
		t.Fatalf("chain of %d certificates, want leaf and intermediate", len(pair.Certificate))
	}
	if string(leaf.CA) != string(root.TrustBundle()) {
		t.Error("the leaf's CA bundle is not the root")
	}
	if err := inter.Verify(leaf, certs.GatewayRequest(gatewayID("a", "b"), 0), time.Now()); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// companyRoot is a root CA that, unlike gatewire's own, may sign
// intermediates.
func companyRoot(t *testing.T) *certs.CA {
	t.Helper()
	tmp := certstest.CA(t, "root key")
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "company root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	key, err := parseKeyPEM(tmp.Bundle().Key)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, tmp.Certificate().PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCA(&certs.Bundle{Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Key: tmp.Bundle().Key})
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// intermediate makes a CA signed by root, stored with the root as its
// trust bundle.
func intermediate(t *testing.T, root *certs.CA) *certs.CA {
	t.Helper()
	tmp := certstest.CA(t, "intermediate") // only for a key
	pub := tmp.Certificate().PublicKey
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "gatewire intermediate"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	rootKey, err := parseKeyPEM(root.Bundle().Key)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root.Certificate(), pub, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCA(&certs.Bundle{
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  tmp.Bundle().Key,
		CA:   root.TrustBundle(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func parseKeyPEM(data []byte) (any, error) {
	block, _ := pem.Decode(data)
	return x509.ParsePKCS8PrivateKey(block.Bytes)
}

func TestSPIFFEIDs(t *testing.T) {
	id := gatewayID("shop", "edge")
	if got, err := certs.ParseGatewayID(id.String()); err != nil || got != id {
		t.Errorf("ParseGatewayID(%s) = %+v, %v", id, got, err)
	}
	bad := []string{
		"https://gatewire.local/ns/shop/gateway/edge",
		"spiffe://gatewire.local/ns/shop/gateway",
		"spiffe://gatewire.local/ns/shop/gateway/edge/more",
		"spiffe://gatewire.local/ns/shop/route/edge",
		"spiffe://gatewire.local:8443/ns/shop/gateway/edge",
		"spiffe://user@gatewire.local/ns/shop/gateway/edge",
		"spiffe://gatewire.local/ns/shop/gateway/edge?x=1",
		"spiffe://gatewire.local/ns/shop/gateway/edge#x",
		"spiffe://gatewire.local/ns//gateway/edge",
		"spiffe://gatewire.local/ns/../gateway/edge",
		"spiffe://gatewire.local/ns/sh%6Fp/gateway/edge",
		"spiffe://GATEWIRE.local/ns/shop/gateway/edge",
		"spiffe://gatewire.local/ns/Shop/gateway/edge",
		"spiffe://gatewire.local/ns/shop/gateway/-edge",
		"spiffe:///ns/shop/gateway/edge",
		"spiffe://gatewire.local/ns/" + strings.Repeat("a", 64) + "/gateway/edge",
	}
	for _, uri := range bad {
		if id, err := certs.ParseGatewayID(uri); err == nil {
			t.Errorf("ParseGatewayID(%q) = %+v, want an error", uri, id)
		}
	}
}

func TestGatewayOfRefuses(t *testing.T) {
	two := &x509.Certificate{URIs: []*url.URL{gatewayID("a", "b").URL(), gatewayID("a", "c").URL()}}
	if _, _, err := certs.GatewayOf(two); err == nil {
		t.Error("GatewayOf accepted a certificate naming two gateways")
	}
	other := &x509.Certificate{URIs: []*url.URL{{Scheme: "spiffe", Host: "gatewire.local", Path: "/gatewire/xds"}}}
	if _, _, err := certs.GatewayOf(other); !errors.Is(err, certs.ErrNoGateway) {
		t.Errorf("GatewayOf(service) = %v, want ErrNoGateway", err)
	}
	if _, _, err := certs.GatewayOf(nil); !errors.Is(err, certs.ErrNoGateway) {
		t.Errorf("GatewayOf(nil) = %v", err)
	}
	foreign := &x509.Certificate{URIs: []*url.URL{{Scheme: "spiffe", Host: "evil.example", Path: "/ns/a/gateway/b"}}}
	if _, err := certs.GatewayIDOf(foreign, certs.DefaultTrustDomain); err == nil {
		t.Error("GatewayIDOf accepted another trust domain")
	}
	if id, err := certs.GatewayIDOf(foreign, "evil.example"); err != nil || id.Name != "b" {
		t.Errorf("GatewayIDOf = %+v, %v", id, err)
	}
}
