package xdsgen

import (
	"fmt"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	matcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	udpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// tcpFilterChains returns the filter chain of a TCP listener: a TCP proxy
// to the backends of its first L4 route, which takes precedence over the
// others. With no route, connections are refused.
func tcpFilterChains(l *irv1.Listener) ([]*listenerv3.FilterChain, error) {
	var backends []*irv1.WeightedBackend
	if rs := l.GetL4Routes(); len(rs) > 0 {
		backends = rs[0].GetBackends()
	}
	proxy, err := tcpProxy(l.GetName(), backends)
	if err != nil {
		return nil, err
	}
	return []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{proxy}}}, nil
}

// tcpProxy returns a TCP proxy network filter to weighted backends. Shares
// of invalid backends (and no backends at all) go to
// [InvalidBackendCluster], which does not exist: those connections are
// closed.
func tcpProxy(statPrefix string, backends []*irv1.WeightedBackend) (*listenerv3.Filter, error) {
	proxy := &tcpproxyv3.TcpProxy{StatPrefix: statPrefix}
	switch len(backends) {
	case 0:
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_Cluster{Cluster: InvalidBackendCluster}
	case 1:
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_Cluster{Cluster: shareCluster(backends[0])}
	default:
		weighted := &tcpproxyv3.TcpProxy_WeightedCluster{}
		for _, b := range backends {
			weighted.Clusters = append(weighted.Clusters, &tcpproxyv3.TcpProxy_WeightedCluster_ClusterWeight{
				Name: shareCluster(b), Weight: b.GetWeight(),
			})
		}
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_WeightedClusters{WeightedClusters: weighted}
	}
	typed, err := typedConfig(proxy)
	if err != nil {
		return nil, fmt.Errorf("tcp proxy %s: %w", statPrefix, err)
	}
	return &listenerv3.Filter{
		Name:       "envoy.filters.network.tcp_proxy",
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: typed},
	}, nil
}

// shareCluster is the cluster of a weighted share: its backend, or
// [InvalidBackendCluster] for the share of backendRefs that could not be
// resolved.
func shareCluster(b *irv1.WeightedBackend) string {
	if b.GetBackend() == "" {
		return InvalidBackendCluster
	}
	return b.GetBackend()
}

// udpListener returns the UDP listener of an IR listener: a UDP proxy to
// the backends of its first L4 route. The UDP proxy has a single cluster:
// several shares (of backends, or of backendRefs that could not be
// resolved) are the cluster [UDPWeightedCluster] builds. With no route, or
// no backend, datagrams are dropped.
func udpListener(l *irv1.Listener) (*listenerv3.Listener, error) {
	cluster := InvalidBackendCluster
	switch {
	case udpWeighted(l):
		cluster = weightedClusterName(l)
	case len(l.GetL4Routes()) > 0:
		if valid := validShares(l.GetL4Routes()[0].GetBackends()); len(valid) == 1 {
			cluster = valid[0].GetBackend()
		}
	}
	route, err := typedConfig(&udpproxyv3.Route{Cluster: cluster})
	if err != nil {
		return nil, fmt.Errorf("listener %s: udp route: %w", l.GetName(), err)
	}
	proxy, err := typedConfig(&udpproxyv3.UdpProxyConfig{
		StatPrefix: l.GetName(),
		RouteSpecifier: &udpproxyv3.UdpProxyConfig_Matcher{Matcher: &matcherv3.Matcher{
			OnNoMatch: &matcherv3.Matcher_OnMatch{OnMatch: &matcherv3.Matcher_OnMatch_Action{
				Action: &xdscorev3.TypedExtensionConfig{Name: "route", TypedConfig: route},
			}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("listener %s: udp proxy: %w", l.GetName(), err)
	}
	addr := socketAddress("0.0.0.0", BindPort(l.GetPort()))
	addr.GetSocketAddress().Protocol = corev3.SocketAddress_UDP
	return &listenerv3.Listener{
		Name:    l.GetName(),
		Address: addr,
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       "envoy.filters.udp_listener.udp_proxy",
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: proxy},
		}},
	}, nil
}

// validShares returns the shares that name a backend.
func validShares(backends []*irv1.WeightedBackend) []*irv1.WeightedBackend {
	var out []*irv1.WeightedBackend
	for _, b := range backends {
		if b.GetBackend() != "" {
			out = append(out, b)
		}
	}
	return out
}

func weightedClusterName(l *irv1.Listener) string { return l.GetName() + "/weighted" }

// UDPWeightedCluster returns, for a UDP listener whose first route has
// several shares of which one at least names a backend, the EDS cluster
// "<listener>/weighted" that balances over all of their endpoints by
// locality weight; nil otherwise. Its endpoints are
// [UDPWeightedLoadAssignment].
func UDPWeightedCluster(l *irv1.Listener) *clusterv3.Cluster {
	if !udpWeighted(l) {
		return nil
	}
	return &clusterv3.Cluster{
		Name:                 weightedClusterName(l),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		CommonLbConfig: &clusterv3.Cluster_CommonLbConfig{
			LocalityConfigSpecifier: &clusterv3.Cluster_CommonLbConfig_LocalityWeightedLbConfig_{
				LocalityWeightedLbConfig: &clusterv3.Cluster_CommonLbConfig_LocalityWeightedLbConfig{},
			},
		},
	}
}

// The locality of a weighted UDP cluster that drops datagrams holds one
// endpoint: the discard port of the proxy's own loopback, where nothing
// listens, so the kernel drops what is sent there. A locality without
// endpoints would not do: Envoy gives its weight to the other localities.
const (
	dropLocality = "dropped"
	dropAddress  = "127.0.0.1"
	dropPort     = 9
)

// UDPWeightedLoadAssignment returns the endpoints of the cluster
// [UDPWeightedCluster] gives l, or nil: one locality per backend of its
// first route, weighted like the backend, with that backend's endpoints.
// The shares of backendRefs that could not be resolved and of backends
// without endpoints are dropped, as the Gateway API requires: they make
// one locality, last, whose endpoint discards them. backends are the
// gateway's backends by name. It depends on endpoints: whoever updates
// load assignments must update these too.
func UDPWeightedLoadAssignment(l *irv1.Listener, backends map[string]*irv1.Backend) *endpointv3.ClusterLoadAssignment {
	if !udpWeighted(l) {
		return nil
	}
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: weightedClusterName(l)}
	var dropped uint32
	for _, share := range l.GetL4Routes()[0].GetBackends() {
		var endpoints []*endpointv3.LocalityLbEndpoints
		if share.GetBackend() != "" {
			endpoints = LoadAssignment(backends[share.GetBackend()]).GetEndpoints()
		}
		if len(endpoints) == 0 {
			dropped += share.GetWeight()
			continue
		}
		cla.Endpoints = append(cla.Endpoints, &endpointv3.LocalityLbEndpoints{
			Locality:            &corev3.Locality{SubZone: share.GetBackend()},
			LoadBalancingWeight: wrapperspb.UInt32(share.GetWeight()),
			LbEndpoints:         endpoints[0].GetLbEndpoints(),
		})
	}
	if dropped > 0 {
		cla.Endpoints = append(cla.Endpoints, &endpointv3.LocalityLbEndpoints{
			Locality:            &corev3.Locality{SubZone: dropLocality},
			LoadBalancingWeight: wrapperspb.UInt32(dropped),
			LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{
				Endpoint: &endpointv3.Endpoint{Address: socketAddress(dropAddress, dropPort)},
			}}},
		})
	}
	return cla
}

// udpWeighted reports whether l is a UDP listener whose first route has
// several shares, of which one at least names a backend.
func udpWeighted(l *irv1.Listener) bool {
	rs := l.GetL4Routes()
	return l.GetProtocol() == irv1.Protocol_PROTOCOL_UDP && len(rs) > 0 &&
		len(rs[0].GetBackends()) > 1 && len(validShares(rs[0].GetBackends())) > 0
}
