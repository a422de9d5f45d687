package xds

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gatewire/gatewire/pkg/certs"
)

// serverCreds are the gRPC credentials of the server: TLS 1.3, ALPN h2,
// the certificate of GATEWIRE_XDS_TLS_CERT and _KEY, and a client
// certificate required of every client and verified against
// GATEWIRE_XDS_TLS_CA. The files are read now (an error names the
// variable of the file that does not load) and again, at a handshake, once
// a second has passed since the last read: a renewed certificate or CA
// bundle is used for new connections, and connections already open are
// not disturbed. A renewal that does not load is logged and the previous
// files stay in use.
func serverCreds(t TLS, log *slog.Logger) (credentials.TransportCredentials, error) {
	if err := t.required(); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, path string }{
		{"GATEWIRE_XDS_TLS_CERT", t.CertFile},
		{"GATEWIRE_XDS_TLS_KEY", t.KeyFile},
		{"GATEWIRE_XDS_TLS_CA", t.CAFile},
	} {
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	files := certs.Files{Cert: t.CertFile, Key: t.KeyFile, CA: t.CAFile}
	r, err := certs.NewReloader(files, certs.OnChange(func(leaf *x509.Certificate, err error) {
		if err != nil {
			log.Error("xds server certificate not reloaded; the previous one stays in use", "cert", files.Cert, "error", err)
			return
		}
		log.Info("xds server certificate loaded", "cert", files.Cert, "subject", leaf.Subject.String(),
			"not_after", leaf.NotAfter)
	}))
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_XDS_TLS_CERT, GATEWIRE_XDS_TLS_KEY: %w", err)
	}
	if err := r.Load(); err != nil {
		return nil, fmt.Errorf("GATEWIRE_XDS_TLS_CERT, GATEWIRE_XDS_TLS_KEY, GATEWIRE_XDS_TLS_CA: %w", err)
	}
	return credentials.NewTLS(r.ServerConfig()), nil
}

// errNoPeerCert is returned, in the secure mode, to a stream whose
// connection carries no verified client certificate. The TLS handshake
// refuses such clients, so it means a listener given with WithListener
// that was not the server's own.
var errNoPeerCert = status.Error(codes.Unauthenticated, "xds: the connection has no verified client certificate")

// authorize checks that the client certificate of the stream's connection
// names, in its gateway SPIFFE ID, the gateway that cluster (the node's
// <namespace>/<gateway>) asks for; the ID must be in the configured trust
// domain. It refuses with PermissionDenied, naming both, otherwise. In the
// insecure mode every cluster is allowed.
func (s *Service) authorize(st *stream, cluster string) error {
	if s.cfg.XDSInsecure {
		return nil
	}
	leaf := peerLeaf(st)
	if leaf == nil {
		return errNoPeerCert
	}
	id, err := certs.GatewayIDOf(leaf, s.cfg.Domain())
	if err != nil {
		return status.Errorf(codes.PermissionDenied,
			"xds: node.cluster %q refused: the client certificate (subject %q) names no gateway of trust domain %q: %v",
			truncate(cluster, 200), leaf.Subject.String(), s.cfg.Domain(), err)
	}
	if want := id.Namespace + "/" + id.Name; cluster != want {
		return status.Errorf(codes.PermissionDenied,
			"xds: node.cluster %q refused: the client certificate names gateway %s (%s); a client may ask only for the gateway its certificate names",
			truncate(cluster, 200), want, id)
	}
	return nil
}

// peerLeaf is the verified client certificate of the stream's connection;
// nil when it has none.
func peerLeaf(st *stream) *x509.Certificate {
	p, ok := peer.FromContext(st.grpc.Context())
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(info.State.VerifiedChains) == 0 || len(info.State.VerifiedChains[0]) == 0 {
		return nil
	}
	return info.State.VerifiedChains[0][0]
}
