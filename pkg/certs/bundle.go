package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
)

// MaxPEMSize bounds every PEM file and Secret value this package reads: a
// chain of a few certificates is a few KiB.
const MaxPEMSize = 1 << 20

// Files names the three PEM files of a bundle.
type Files struct {
	// Cert is the certificate chain, leaf first.
	Cert string
	// Key is the private key of the leaf.
	Key string
	// CA is the CA bundle that verifies peers.
	CA string
}

// The file names of a bundle in a folder, the keys of a kubernetes.io/tls
// Secret.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// DirFiles are the files of a bundle in dir: tls.crt, tls.key and ca.crt.
func DirFiles(dir string) Files {
	return Files{Cert: filepath.Join(dir, CertFile), Key: filepath.Join(dir, KeyFile), CA: filepath.Join(dir, CAFile)}
}

// Bundle is a certificate, its key and a CA bundle, as PEM. A Bundle is a
// value: nothing in this package changes one after it is returned.
type Bundle struct {
	// Cert is the chain, leaf first.
	Cert []byte
	// Key is the leaf's private key, PKCS #8.
	Key []byte
	// CA is the CA bundle that verifies peers.
	CA []byte
}

// Leaf parses the first certificate of the chain.
func (b *Bundle) Leaf() (*x509.Certificate, error) {
	certs, err := parseCerts(b.Cert)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// KeyPair parses the chain and key into a tls.Certificate, checking that the
// key is the leaf's.
func (b *Bundle) KeyPair() (tls.Certificate, error) {
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certificate and key: %w", err)
	}
	return pair, nil
}

// Pool parses the CA bundle into a certificate pool.
func (b *Bundle) Pool() (*x509.CertPool, error) {
	certs, err := parseCerts(b.CA)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// Equal reports whether two bundles hold the same bytes.
func (b *Bundle) Equal(o *Bundle) bool {
	return b != nil && o != nil && bytes.Equal(b.Cert, o.Cert) && bytes.Equal(b.Key, o.Key) && bytes.Equal(b.CA, o.CA)
}

// errNoCertificate: PEM data without a CERTIFICATE block.
var errNoCertificate = errors.New("no PEM CERTIFICATE block")

// parseCerts parses every CERTIFICATE block of data, and fails on none.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	if len(data) > MaxPEMSize {
		return nil, fmt.Errorf("PEM data of %d bytes, more than %d", len(data), MaxPEMSize)
	}
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errNoCertificate
	}
	return out, nil
}

// parseKey parses the first PRIVATE KEY (PKCS #8), EC PRIVATE KEY or RSA
// PRIVATE KEY block of data; the last two are what other tools (openssl,
// cert-manager) write for a key brought from outside.
func parseKey(data []byte) (crypto.Signer, error) {
	if len(data) > MaxPEMSize {
		return nil, fmt.Errorf("PEM data of %d bytes, more than %d", len(data), MaxPEMSize)
	}
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key block")
		}
		var (
			key any
			err error
		)
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("private key: %w", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("private key of type %T cannot sign", key)
		}
		return signer, nil
	}
}

// newKey makes an ECDSA P-256 key and its PKCS #8 PEM.
func newKey() (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
