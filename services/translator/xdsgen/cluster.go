package xdsgen

import (
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// SystemCAFile is the CA bundle of the proxy image that backends with
// well-known CAs (BackendTLSPolicy wellKnownCACertificates: System) are
// verified against.
const SystemCAFile = "/etc/ssl/certs/ca-certificates.crt"

// Cluster returns the EDS cluster of an IR backend, named like it; its
// endpoints are the ClusterLoadAssignment of the same name over ADS. An
// HTTP/2 backend is spoken to in HTTP/2 (without TLS: h2c, unless the
// backend has TLS, which then offers h2 by ALPN). A backend with TLS gets a
// TLS transport socket: the SNI, the CA certificates (or the system's) and
// the subject alternative names to verify. A backend whose TLS has no CA to
// trust must not be reached: it gets no transport socket and, in
// [LoadAssignment], no endpoints.
func Cluster(b *irv1.Backend) (*clusterv3.Cluster, error) {
	c := &clusterv3.Cluster{
		Name:                 b.GetName(),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	}
	if b.GetProtocol() == irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2 {
		opts, err := typedConfig(&httpv3.HttpProtocolOptions{
			UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
			}},
		})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: protocol options: %w", b.GetName(), err)
		}
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}
	}
	if trusted(b.GetTls()) {
		ts, err := upstreamTLS(b)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", b.GetName(), err)
		}
		c.TransportSocket = ts
	}
	return c, nil
}

// trusted reports whether a backend TLS has something to verify the
// backend's certificate with.
func trusted(t *irv1.BackendTLS) bool {
	return t != nil && (t.GetWellKnownCas() || len(t.GetCaCertificates()) > 0)
}

// refused reports whether a backend must not be reached: it needs TLS but
// has no CA to trust.
func refused(b *irv1.Backend) bool { return b.GetTls() != nil && !trusted(b.GetTls()) }

// upstreamTLS returns the TLS transport socket of a backend, which presents
// the backend's client certificate (over SDS) when it has one. Subject
// alternative names with a ":" are URIs (such as SPIFFE IDs), the others
// DNS names (which match wildcard certificates as Envoy does).
func upstreamTLS(b *irv1.Backend) (*corev3.TransportSocket, error) {
	t := b.GetTls()
	validation := &tlsv3.CertificateValidationContext{}
	if t.GetWellKnownCas() {
		validation.TrustedCa = &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: SystemCAFile}}
	} else {
		validation.TrustedCa = &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: t.GetCaCertificates()}}
	}
	for _, san := range t.GetSubjectAltNames() {
		typ := tlsv3.SubjectAltNameMatcher_DNS
		if strings.Contains(san, ":") {
			typ = tlsv3.SubjectAltNameMatcher_URI
		}
		validation.MatchTypedSubjectAltNames = append(validation.MatchTypedSubjectAltNames, &tlsv3.SubjectAltNameMatcher{
			SanType: typ,
			Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: san}},
		})
	}
	common := &tlsv3.CommonTlsContext{
		ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: validation},
	}
	if cert := t.GetClientCertificate(); cert != "" {
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{{Name: cert, SdsConfig: adsSource()}}
	}
	if b.GetProtocol() == irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2 {
		common.AlpnProtocols = []string{"h2"}
	}
	typed, err := typedConfig(&tlsv3.UpstreamTlsContext{Sni: t.GetSni(), CommonTlsContext: common})
	if err != nil {
		return nil, fmt.Errorf("upstream TLS: %w", err)
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: typed}}, nil
}
