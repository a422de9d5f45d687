package xdsgen

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsinspectorv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// tlsFilterChains returns the filter chains of an HTTPS or TLS listener,
// one per SNI name, selected by the TLS inspector: first the TLS routes
// (passthrough: the connection, still encrypted, goes to the route's
// backends; or terminated with the route's certificates first), in IR
// order, then the TLS terminations of HTTPS (the listener's certificates,
// then HTTP routing). An SNI name that an earlier chain
// already matches is skipped. "*" (or an empty hostname) matches any SNI,
// and no SNI: Envoy prefers the chain with the most specific match.
func tlsFilterChains(l *irv1.Listener) ([]*listenerv3.FilterChain, error) {
	var chains []*listenerv3.FilterChain
	used := map[string]bool{}
	for _, r := range l.GetTlsRoutes() {
		var names []string
		for _, h := range r.GetHostnames() {
			if !used[h] {
				used[h] = true
				names = append(names, h)
			}
		}
		for _, match := range serverNameMatches(names) {
			chain, err := tlsRouteChain(l, r, match)
			if err != nil {
				return nil, err
			}
			chains = append(chains, chain)
		}
	}
	for _, term := range l.GetTls() {
		host := orAny(term.GetHostname())
		if used[host] {
			continue
		}
		used[host] = true
		chain, err := terminationChain(l, term, host)
		if err != nil {
			return nil, err
		}
		chains = append(chains, chain)
	}
	return chains, nil
}

// tlsRouteChain returns the filter chain of a TLS route for the SNI names
// match selects: a TCP proxy to the route's backends, after terminating
// TLS with the route's certificates when it has some.
func tlsRouteChain(l *irv1.Listener, r *irv1.L4Route, match *listenerv3.FilterChainMatch) (*listenerv3.FilterChain, error) {
	proxy, err := tcpProxy(l.GetName()+"/"+r.GetName(), r.GetBackends())
	if err != nil {
		return nil, err
	}
	chain := &listenerv3.FilterChain{
		Name:             "passthrough/" + r.GetName() + "/" + chainSuffix(match),
		FilterChainMatch: match,
		Filters:          []*listenerv3.Filter{proxy},
	}
	if len(r.GetSecrets()) > 0 {
		chain.Name = "terminate-tcp/" + r.GetName() + "/" + chainSuffix(match)
		if chain.TransportSocket, err = downstreamTLS(r.GetSecrets(), nil, nil); err != nil {
			return nil, fmt.Errorf("listener %s: TLS for %s: %w", l.GetName(), r.GetName(), err)
		}
	}
	return chain, nil
}

// terminationChain returns the filter chain that terminates TLS for SNI
// host with the termination's certificates and routes HTTP requests.
func terminationChain(l *irv1.Listener, term *irv1.TLSTermination, host string) (*listenerv3.FilterChain, error) {
	hcm, err := httpConnectionManager(l)
	if err != nil {
		return nil, err
	}
	ts, err := downstreamTLS(term.GetSecrets(), []string{"h2", "http/1.1"}, clientValidation(term))
	if err != nil {
		return nil, fmt.Errorf("listener %s: TLS for %s: %w", l.GetName(), host, err)
	}
	return &listenerv3.FilterChain{
		Name:             "terminate/" + host,
		FilterChainMatch: serverNameMatches([]string{host})[0],
		TransportSocket:  ts,
		Filters:          []*listenerv3.Filter{hcm},
	}, nil
}

// serverNameMatches returns the filter chain matches for SNI names: one
// with every specific name, and one that matches anything (nil) when names
// hold "*".
func serverNameMatches(names []string) []*listenerv3.FilterChainMatch {
	var out []*listenerv3.FilterChainMatch
	var specific []string
	anyName := false
	for _, n := range names {
		if n == "*" || n == "" {
			anyName = true
		} else {
			specific = append(specific, n)
		}
	}
	if len(specific) > 0 {
		out = append(out, &listenerv3.FilterChainMatch{ServerNames: specific})
	}
	if anyName {
		out = append(out, nil)
	}
	return out
}

func chainSuffix(m *listenerv3.FilterChainMatch) string {
	if m == nil {
		return "*"
	}
	return m.GetServerNames()[0]
}

func orAny(host string) string {
	if host == "" {
		return "*"
	}
	return host
}

// clientValidation returns how a TLS termination validates client
// certificates, or nil: against its CA certificates, and, when the client
// certificate is optional, accepting connections without a valid one.
func clientValidation(term *irv1.TLSTermination) *tlsv3.CertificateValidationContext {
	if len(term.GetClientCaCertificates()) == 0 {
		return nil
	}
	v := &tlsv3.CertificateValidationContext{
		TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: term.GetClientCaCertificates()}},
	}
	if term.GetClientCertificateOptional() {
		v.TrustChainVerification = tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED
	}
	return v
}

// downstreamTLS returns the transport socket that terminates TLS with the
// named certificates, fetched over SDS (ADS), offering the ALPN protocols
// alpn (HTTP/2 and HTTP/1.1 for HTTP, none for TCP). With a validation
// context clients are asked for a certificate, required unless the context
// accepts untrusted ones.
func downstreamTLS(secrets, alpn []string, validation *tlsv3.CertificateValidationContext) (*corev3.TransportSocket, error) {
	ctx := &tlsv3.DownstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{AlpnProtocols: alpn}}
	if validation != nil {
		ctx.CommonTlsContext.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: validation}
		required := validation.GetTrustChainVerification() != tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED
		ctx.RequireClientCertificate = wrapperspb.Bool(required)
	}
	for _, name := range secrets {
		ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs = append(ctx.CommonTlsContext.TlsCertificateSdsSecretConfigs,
			&tlsv3.SdsSecretConfig{Name: name, SdsConfig: adsSource()})
	}
	typed, err := typedConfig(ctx)
	if err != nil {
		return nil, err
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: typed}}, nil
}

func tlsInspector() (*listenerv3.ListenerFilter, error) {
	typed, err := typedConfig(&tlsinspectorv3.TlsInspector{})
	if err != nil {
		return nil, fmt.Errorf("tls inspector: %w", err)
	}
	return &listenerv3.ListenerFilter{
		Name:       "envoy.filters.listener.tls_inspector",
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: typed},
	}, nil
}
