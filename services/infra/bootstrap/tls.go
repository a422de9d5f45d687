package bootstrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// The names of the two SDS secrets of the xds connection.
const (
	ClientCertificateSecret = "xds_client_certificate"
	TrustedCASecret         = "xds_trusted_ca"
)

// The files of a certificate folder, as package certs writes them (and as a
// kubernetes.io/tls Secret is mounted).
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
	caFile   = "ca.crt"
)

// TLS says how an Envoy connects to the xds service over mTLS.
type TLS struct {
	// CertificateSDS and TrustedCASDS are the paths of the SDS files Envoy
	// reads its client certificate and the CA bundle from (see SDSFiles).
	// Envoy follows both, and the certificate files they name, so a
	// rotated certificate is picked up without a restart. Required.
	CertificateSDS, TrustedCASDS string
	// ServerID is the URI SAN the xds server's certificate must hold, its
	// SPIFFE ID (spiffe://<trust domain>/gatewire/xds). Required.
	ServerID string
}

func (t *TLS) check() error {
	if t.CertificateSDS == "" || t.TrustedCASDS == "" || t.ServerID == "" {
		return errors.New("xds TLS: the certificate and CA SDS files and the server's SPIFFE ID are all required")
	}
	return nil
}

// transportSocket is the TLS of the xds cluster: TLS 1.3, ALPN h2, the
// client certificate and CA bundle from SDS files, and the server's SPIFFE
// ID checked. sni is the xds host when it is a DNS name.
func (t *TLS) transportSocket(sni string) (*corev3.TransportSocket, error) {
	ctx := &tlsv3.UpstreamTlsContext{
		Sni: sni,
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsParams: &tlsv3.TlsParameters{
				TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
				TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
			},
			AlpnProtocols: []string{"h2"},
			TlsCertificateSdsSecretConfigs: []*tlsv3.SdsSecretConfig{
				{Name: ClientCertificateSecret, SdsConfig: pathSource(t.CertificateSDS)},
			},
			ValidationContextType: &tlsv3.CommonTlsContext_CombinedValidationContext{
				CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
					DefaultValidationContext: &tlsv3.CertificateValidationContext{
						MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{{
							SanType: tlsv3.SubjectAltNameMatcher_URI,
							Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: t.ServerID}},
						}},
					},
					ValidationContextSdsSecretConfig: &tlsv3.SdsSecretConfig{Name: TrustedCASecret, SdsConfig: pathSource(t.TrustedCASDS)},
				},
			},
		},
	}
	typed, err := anypb.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("xds TLS: %w", err)
	}
	return &corev3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: typed},
	}, nil
}

// pathSource is an SDS config read from a file Envoy watches.
func pathSource(p string) *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_PathConfigSource{
			PathConfigSource: &corev3.PathConfigSource{Path: p},
		},
		ResourceApiVersion: corev3.ApiVersion_V3,
	}
}

// sni is the server name an Envoy sends: the xds host, unless it is an IP
// address (SNI holds names only).
func sni(host string) string {
	if net.ParseIP(host) != nil {
		return ""
	}
	return host
}

// SDSFiles renders the two SDS files of TLS for a certificate folder
// certDir that holds tls.crt, tls.key and ca.crt (a folder package certs
// writes, or a mounted kubernetes.io/tls Secret): the client certificate and
// the CA bundle, each a DiscoveryResponse with one Secret, as JSON. Each
// watches certDir, so a Secret volume's atomic swap of its files, or a
// rename into the folder, reloads them. Paths are Envoy's, absolute.
func SDSFiles(certDir string) (certificate, trustedCA []byte, err error) {
	if !path.IsAbs(certDir) {
		return nil, nil, fmt.Errorf("certificate folder %q is not an absolute path", certDir)
	}
	watched := &corev3.WatchedDirectory{Path: certDir}
	certificate, err = sdsFile(&tlsv3.Secret{
		Name: ClientCertificateSecret,
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: fileSource(path.Join(certDir, certFile)),
			PrivateKey:       fileSource(path.Join(certDir, keyFile)),
			WatchedDirectory: watched,
		}},
	})
	if err != nil {
		return nil, nil, err
	}
	trustedCA, err = sdsFile(&tlsv3.Secret{
		Name: TrustedCASecret,
		Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
			TrustedCa:        fileSource(path.Join(certDir, caFile)),
			WatchedDirectory: watched,
		}},
	})
	return certificate, trustedCA, err
}

func fileSource(p string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: p}}
}

func sdsFile(secret *tlsv3.Secret) ([]byte, error) {
	if err := secret.ValidateAll(); err != nil {
		return nil, fmt.Errorf("SDS secret %s: %w", secret.GetName(), err)
	}
	res, err := anypb.New(secret)
	if err != nil {
		return nil, err
	}
	resp := &discoveryv3.DiscoveryResponse{Resources: []*anypb.Any{res}}
	return marshalIndented(resp)
}

// marshalIndented is proto JSON with stable indentation.
func marshalIndented(m proto.Message) ([]byte, error) {
	raw, err := marshalOptions.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", m, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
