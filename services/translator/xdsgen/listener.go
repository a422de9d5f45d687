package xdsgen

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// privilegedShift is added to ports below 1024 to get the port Envoy binds.
const privilegedShift = 10000

// BindPort returns the port Envoy binds for a gateway port: the port itself,
// or port+10000 for privileged ports.
func BindPort(port uint32) uint32 {
	if port < 1024 {
		return port + privilegedShift
	}
	return port
}

// httpFilter is one HTTP filter of the HTTP connection managers. config
// returns its typed config for an IR listener, or nil to leave the filter
// out of that listener.
type httpFilter struct {
	name   string
	config func(l *irv1.Listener) proto.Message
}

// httpFilters are the HTTP filters of every HTTP connection manager, in the
// order requests go through them. The router is last.
var httpFilters = []httpFilter{
	{name: CORSFilterName, config: corsFilter},
	{name: "envoy.filters.http.router", config: func(*irv1.Listener) proto.Message { return &routerv3.Router{} }},
}

// ServesHTTP reports whether an IR listener routes HTTP requests, and so
// has a RouteConfiguration: plain HTTP, or HTTPS with a TLS termination.
func ServesHTTP(l *irv1.Listener) bool {
	return l.GetProtocol() == irv1.Protocol_PROTOCOL_HTTP || len(l.GetTls()) > 0
}

// Listener returns the Envoy listener of an IR listener, on 0.0.0.0 and
// the bind port, or nil when it has nothing to serve:
//
//   - HTTP: one filter chain with an HTTP connection manager whose routes
//     are the RouteConfiguration of the same name, over ADS;
//   - HTTPS and TLS: a TLS inspector and one filter chain per SNI name (see
//     tlsFilterChains): TLS passthrough of TLS routes, and termination with
//     the listener's certificates for HTTPS;
//   - TCP: one filter chain proxying to the first L4 route's backends;
//   - UDP: a UDP listener proxying datagrams to the first L4 route's
//     backends.
func Listener(l *irv1.Listener) (*listenerv3.Listener, error) {
	var chains []*listenerv3.FilterChain
	var err error
	switch l.GetProtocol() {
	case irv1.Protocol_PROTOCOL_HTTP:
		var hcm *listenerv3.Filter
		hcm, err = httpConnectionManager(l)
		chains = []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{hcm}}}
	case irv1.Protocol_PROTOCOL_HTTPS, irv1.Protocol_PROTOCOL_TLS:
		chains, err = tlsFilterChains(l)
	case irv1.Protocol_PROTOCOL_TCP:
		chains, err = tcpFilterChains(l)
	case irv1.Protocol_PROTOCOL_UDP:
		return udpListener(l)
	default:
		return nil, fmt.Errorf("listener %s: protocol %s is not supported", l.GetName(), l.GetProtocol())
	}
	if err != nil || len(chains) == 0 {
		return nil, err
	}
	out := &listenerv3.Listener{
		Name:         l.GetName(),
		Address:      socketAddress("0.0.0.0", BindPort(l.GetPort())),
		FilterChains: chains,
	}
	if l.GetProtocol() != irv1.Protocol_PROTOCOL_HTTP && l.GetProtocol() != irv1.Protocol_PROTOCOL_TCP {
		inspector, err := tlsInspector()
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.GetName(), err)
		}
		out.ListenerFilters = []*listenerv3.ListenerFilter{inspector}
	}
	return out, nil
}

// httpConnectionManager returns the HTTP connection manager of an IR
// listener: routes from the RouteConfiguration of the same name over ADS,
// the HTTP filters, HTTP/1.1 and HTTP/2 (also without TLS, as gRPC clients
// speak it), and WebSocket upgrades.
func httpConnectionManager(l *irv1.Listener) (*listenerv3.Filter, error) {
	var filters []*hcmv3.HttpFilter
	for _, f := range httpFilters {
		cfg := f.config(l)
		if cfg == nil {
			continue
		}
		typed, err := typedConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("listener %s: %s filter: %w", l.GetName(), f.name, err)
		}
		filters = append(filters, &hcmv3.HttpFilter{Name: f.name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: typed}})
	}
	hcm, err := typedConfig(&hcmv3.HttpConnectionManager{
		StatPrefix: l.GetName(),
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: l.GetName(),
		}},
		HttpFilters:    filters,
		UpgradeConfigs: []*hcmv3.HttpConnectionManager_UpgradeConfig{{UpgradeType: "websocket"}},
	})
	if err != nil {
		return nil, fmt.Errorf("listener %s: http connection manager: %w", l.GetName(), err)
	}
	return &listenerv3.Filter{
		Name:       "envoy.filters.network.http_connection_manager",
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
	}, nil
}

// adsSource is where every dynamic resource comes from: the ADS stream.
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

func socketAddress(address string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       address,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}
