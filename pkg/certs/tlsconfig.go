package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// alpn is what gatewire's TLS servers and clients speak: HTTP/2, for gRPC
// (gRPC-Go refuses a TLS connection that did not agree on h2).
var alpn = []string{"h2"}

// ServerConfig is the TLS configuration of a gatewire server (the xds
// server): TLS 1.3 at least, ALPN h2, a client certificate required and
// verified against the CA bundle of files, and the server certificate of
// files. Every handshake uses the newest good files (see [Reloader]); files
// that do not load at first are an error.
func ServerConfig(files Files, opts ...ReloadOption) (*tls.Config, error) {
	r, err := NewReloader(files, opts...)
	if err != nil {
		return nil, err
	}
	if files.Cert == "" {
		return nil, errors.New("certs: a server needs a certificate and key file")
	}
	if err := r.Load(); err != nil {
		return nil, err
	}
	return r.ServerConfig(), nil
}

// ServerConfig is the server configuration of [ServerConfig] over r.
func (r *Reloader) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		NextProtos: alpn,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			l, err := r.current()
			if err != nil {
				return nil, err
			}
			if l.cert == nil {
				return nil, errors.New("certs: server reloader without a certificate")
			}
			return &tls.Config{
				MinVersion:   tls.VersionTLS13,
				NextProtos:   alpn,
				Certificates: []tls.Certificate{*l.cert},
				ClientCAs:    l.pool,
				ClientAuth:   tls.RequireAndVerifyClientCert,
			}, nil
		},
	}
}

// ClientConfig is the TLS configuration of a client of a gatewire server:
// TLS 1.3, ALPN h2, the client certificate of files (when it has one), and
// the server's chain verified against the CA bundle of files and its
// certificate against serverName (a DNS name or an IP address). Like
// ServerConfig it reads the newest good files at each handshake.
func ClientConfig(files Files, serverName string, opts ...ReloadOption) (*tls.Config, error) {
	if serverName == "" {
		return nil, errors.New("certs: a client needs the server's name to check")
	}
	r, err := NewReloader(files, opts...)
	if err != nil {
		return nil, err
	}
	if err := r.Load(); err != nil {
		return nil, err
	}
	return r.ClientConfig(serverName), nil
}

// ClientConfig is the client configuration of [ClientConfig] over r.
func (r *Reloader) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		NextProtos: alpn,
		ServerName: serverName,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			l, err := r.current()
			if err != nil {
				return nil, err
			}
			if l.cert == nil {
				return &tls.Certificate{}, nil // no certificate to send
			}
			return l.cert, nil
		},
		// The roots change with the files, which RootCAs cannot follow:
		// the chain is verified here instead, as crypto/tls would.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			l, err := r.current()
			if err != nil {
				return err
			}
			return verifyServer(cs, l.pool, serverName)
		},
	}
}

func verifyServer(cs tls.ConnectionState, roots *x509.CertPool, serverName string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("certs: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		DNSName:       serverName,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("certs: server certificate: %w", err)
	}
	return nil
}
