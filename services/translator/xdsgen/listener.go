package xdsgen

import (
	"fmt"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

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

// Listener returns the Envoy listener of an IR listener: 0.0.0.0 on the bind
// port, with an HTTP connection manager that takes its routes from the
// RouteConfiguration of the same name over ADS.
func Listener(l *irv1.Listener) (*listenerv3.Listener, error) {
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, fmt.Errorf("listener %s: router filter: %w", l.GetName(), err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: l.GetName(),
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: l.GetName(),
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("listener %s: http connection manager: %w", l.GetName(), err)
	}
	return &listenerv3.Listener{
		Name:    l.GetName(),
		Address: socketAddress("0.0.0.0", BindPort(l.GetPort())),
		FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{{
				Name:       "envoy.filters.network.http_connection_manager",
				ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
			}},
		}},
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
