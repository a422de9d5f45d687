package xdsgen

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// Secret returns the SDS secret of an IR certificate, named like it
// ("<namespace>/<secret>"): the certificate chain and private key, inline.
// The key is only ever in the snapshot; nothing here logs it.
func Secret(s *irv1.Secret) *tlsv3.Secret {
	return &tlsv3.Secret{
		Name: s.GetName(),
		Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: s.GetCertificateChain()}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: s.GetPrivateKey()}},
		}},
	}
}
