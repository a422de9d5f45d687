package certs

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"
)

const (
	// DefaultCALifetime is the lifetime of a CA gatewire creates.
	DefaultCALifetime = 10 * 365 * 24 * time.Hour
	// DefaultLifetime is the lifetime of a leaf certificate.
	DefaultLifetime = 7 * 24 * time.Hour
	// MinLifetime is the shortest lifetime of a leaf: renewal checks run
	// every minute or so, and clocks drift.
	MinLifetime = time.Hour
	// backdate is how far before its issue a certificate becomes valid, for
	// peers whose clocks are a little behind.
	backdate = 5 * time.Minute
)

// CA signs certificates. Create one with [NewCA] or read one with [ParseCA].
type CA struct {
	cert   *x509.Certificate
	key    crypto.Signer
	bundle *Bundle
	// chain is appended to every leaf: the CA certificate when it is an
	// intermediate, nothing when it is a root (peers hold it already).
	chain []byte
}

// NewCA creates a self-signed CA named name (its common name) valid for
// lifetime from now (0: DefaultCALifetime).
func NewCA(name string, lifetime time.Duration, now time.Time) (*CA, error) {
	if name == "" {
		return nil, errors.New("certs: CA without a name")
	}
	if lifetime == 0 {
		lifetime = DefaultCALifetime
	}
	if lifetime < MinLifetime {
		return nil, fmt.Errorf("certs: CA lifetime %s is shorter than %s", lifetime, MinLifetime)
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"gatewire"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("certs: create CA: %w", err)
	}
	pemCert := certPEM(der)
	return ParseCA(&Bundle{Cert: pemCert, Key: keyPEM, CA: pemCert})
}

// ParseCA reads a CA from a bundle: Cert is the CA certificate (its first
// block), Key its key, and CA the bundle peers trust; an empty CA means the
// CA certificate itself. The CA may be an intermediate of another (a CA
// brought from cert-manager or a company PKI): leaves then carry it in
// their chain.
func ParseCA(b *Bundle) (*CA, error) {
	if b == nil {
		return nil, errors.New("certs: no CA")
	}
	certs, err := parseCerts(b.Cert)
	if err != nil {
		return nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	cert := certs[0]
	if !cert.IsCA || !cert.BasicConstraintsValid {
		return nil, fmt.Errorf("certs: CA certificate %q is not a CA (basic constraints)", cert.Subject)
	}
	if cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("certs: CA certificate %q may not sign certificates (key usage)", cert.Subject)
	}
	key, err := parseKey(b.Key)
	if err != nil {
		return nil, fmt.Errorf("certs: CA key: %w", err)
	}
	if !publicKeysEqual(key.Public(), cert.PublicKey) {
		return nil, fmt.Errorf("certs: CA key does not match the CA certificate %q", cert.Subject)
	}
	trust := b.CA
	if len(trust) == 0 {
		trust = certPEM(cert.Raw)
	}
	if _, err := parseCerts(trust); err != nil {
		return nil, fmt.Errorf("certs: CA bundle: %w", err)
	}
	ca := &CA{cert: cert, key: key, bundle: &Bundle{Cert: b.Cert, Key: b.Key, CA: trust}}
	if !selfSigned(cert) {
		ca.chain = certPEM(cert.Raw)
	}
	return ca, nil
}

// Bundle is the CA as it is stored: its certificate, its key and the trust
// bundle.
func (ca *CA) Bundle() *Bundle { return ca.bundle }

// Certificate is the CA certificate. The caller must not change it.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// TrustBundle is the PEM bundle that verifies what the CA issues: the ca.crt
// of every bundle it issues.
func (ca *CA) TrustBundle() []byte { return ca.bundle.CA }

// Issue signs a new key for req, valid from now for req's lifetime, and
// returns it with its chain and the CA's trust bundle.
func (ca *CA) Issue(req Request, now time.Time) (*Bundle, error) {
	tmpl, err := req.template(now)
	if err != nil {
		return nil, err
	}
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		// Nothing outlives its issuer; the CA must be renewed before.
		tmpl.NotAfter = ca.cert.NotAfter
	}
	if !tmpl.NotAfter.After(now) {
		return nil, fmt.Errorf("certs: the CA %q expired at %s", ca.cert.Subject, ca.cert.NotAfter.Format(time.RFC3339))
	}
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("certs: issue %s: %w", req, err)
	}
	chain := append(certPEM(der), ca.chain...)
	return &Bundle{Cert: chain, Key: keyPEM, CA: ca.bundle.CA}, nil
}

// Verify checks that b is a certificate of this CA for req that is usable
// at now: it parses, its key matches, it chains to the CA's trust bundle for
// req's usages, it names exactly what req names, and its CA bundle is the
// CA's. It does not look at renewal; see [RenewAt].
func (ca *CA) Verify(b *Bundle, req Request, now time.Time) error {
	pair, err := b.KeyPair()
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	if !bytes.Equal(b.CA, ca.bundle.CA) {
		return errors.New("its CA bundle is not the CA's")
	}
	roots, err := b.Pool()
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: req.Usage.extKeyUsages()}); err != nil {
		return err
	}
	return req.matches(leaf)
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certs: serial number: %w", err)
	}
	return serial.Add(serial, big.NewInt(1)), nil
}

func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}
