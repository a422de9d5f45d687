// Package xdstest builds valid xDS snapshots, as the translator writes them
// to the xds bucket, for the tests of any gatewire package.
//
// [Sample] is the smallest snapshot that exercises every dependency Envoy
// follows over ADS: a listener whose HTTP connection manager takes its
// routes over RDS, the route configuration, an EDS cluster and its
// ClusterLoadAssignment. Every resource passes ValidateAll() and the
// snapshot is consistent in the sense of go-control-plane's
// cache.Snapshot.Consistent. Tests that need a variant build the resources
// with [Listener], [RouteConfig], [Cluster] and [LoadAssignment] and pack
// them with [Snapshot]; [APIListener] builds what proxyless gRPC clients
// are served instead of listeners.
package xdstest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// The names of the resources in [Sample].
const (
	ListenerName = "http-10080"
	RouteName    = "http-10080"
	ClusterName  = "backend"
)

// Sample ports: the listener's and the backend endpoint's.
const (
	ListenerPort = 10080
	BackendPort  = 8080
)

// Sample returns the sample snapshot of nodeCluster (<namespace>/<gateway>)
// at version, with the backend endpoint at 127.0.0.1:[BackendPort].
func Sample(nodeCluster, version string) *busv1.XdsSnapshot {
	snap, err := Snapshot(nodeCluster, version,
		Listener(ListenerName, ListenerPort, RouteName),
		RouteConfig(RouteName, ClusterName),
		Cluster(ClusterName),
		LoadAssignment(ClusterName, "127.0.0.1", BackendPort),
	)
	if err != nil {
		panic(fmt.Sprintf("xdstest: sample snapshot: %v", err)) // fixed, valid messages always marshal
	}
	return snap
}

// Snapshot packs resources into an XdsSnapshot: grouped by type URL, types
// in order of their URL, resources sorted by name as the translator writes
// them. It does not check the resources; callers that want a bad snapshot
// get one.
func Snapshot(nodeCluster, version string, resources ...proto.Message) (*busv1.XdsSnapshot, error) {
	byType := map[string][]proto.Message{}
	for _, r := range resources {
		url := "type.googleapis.com/" + string(r.ProtoReflect().Descriptor().FullName())
		byType[url] = append(byType[url], r)
	}
	out := &busv1.XdsSnapshot{NodeCluster: nodeCluster, Version: version}
	for _, url := range slices.Sorted(maps.Keys(byType)) {
		msgs := byType[url]
		slices.SortStableFunc(msgs, func(a, b proto.Message) int {
			return cmp.Compare(cache.GetResourceName(a), cache.GetResourceName(b))
		})
		typed := &busv1.TypedResources{TypeUrl: url}
		for _, m := range msgs {
			a, err := anypb.New(m)
			if err != nil {
				return nil, fmt.Errorf("xdstest: %s %q: %w", url, cache.GetResourceName(m), err)
			}
			typed.Resources = append(typed.Resources, a)
		}
		out.Resources = append(out.Resources, typed)
	}
	return out, nil
}

// ads is the config source of resources that come over the same ADS stream.
func ads() *core.ConfigSource {
	return &core.ConfigSource{
		ResourceApiVersion:    core.ApiVersion_V3,
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}},
	}
}

// Listener is an HTTP listener on 0.0.0.0:port whose connection manager
// takes the route configuration routeName over ADS and ends in the router
// filter.
func Listener(name string, port uint32, routeName string) *listener.Listener {
	manager := connectionManager(name, routeName)
	return &listener.Listener{
		Name: name,
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address:       "0.0.0.0",
			PortSpecifier: &core.SocketAddress_PortValue{PortValue: port},
		}}},
		FilterChains: []*listener.FilterChain{{
			Filters: []*listener.Filter{{
				Name:       "envoy.filters.network.http_connection_manager",
				ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(manager)},
			}},
		}},
	}
}

// APIListener is a listener for proxyless gRPC clients (an XdsSnapshot's
// proxyless_listeners): an api_listener named name whose connection
// manager takes the route configuration routeName over ADS and holds only
// the router filter.
func APIListener(name, routeName string) *listener.Listener {
	return &listener.Listener{
		Name:        name,
		ApiListener: &listener.ApiListener{ApiListener: mustAny(connectionManager(name, routeName))},
	}
}

// connectionManager takes the route configuration routeName over ADS and
// ends in the router filter.
func connectionManager(statPrefix, routeName string) *hcm.HttpConnectionManager {
	return &hcm.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			ConfigSource:    ads(),
			RouteConfigName: routeName,
		}},
		HttpFilters: []*hcm.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&router.Router{})},
		}},
	}
}

// RouteConfig is a route configuration with one virtual host for every
// domain that sends every path to clusterName.
func RouteConfig(name, clusterName string) *route.RouteConfiguration {
	return &route.RouteConfiguration{
		Name: name,
		VirtualHosts: []*route.VirtualHost{{
			Name:    name,
			Domains: []string{"*"},
			Routes: []*route.Route{{
				Match: &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
				Action: &route.Route_Route{Route: &route.RouteAction{
					ClusterSpecifier: &route.RouteAction_Cluster{Cluster: clusterName},
				}},
			}},
		}},
	}
}

// Cluster is an EDS cluster whose endpoints come over ADS.
func Cluster(name string) *cluster.Cluster {
	return &cluster.Cluster{
		Name:                 name,
		ConnectTimeout:       durationpb.New(5 * time.Second),
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
		EdsClusterConfig:     &cluster.Cluster_EdsClusterConfig{EdsConfig: ads()},
	}
}

// LoadAssignment is the ClusterLoadAssignment of clusterName with one
// endpoint at host:port, in one locality of weight 1, as the translator
// writes it (gRPC's xDS client rejects a locality without a name and
// ignores one of weight 0).
func LoadAssignment(clusterName, host string, port uint32) *endpoint.ClusterLoadAssignment {
	return &endpoint.ClusterLoadAssignment{
		ClusterName: clusterName,
		Endpoints: []*endpoint.LocalityLbEndpoints{{
			Locality:            &core.Locality{},
			LoadBalancingWeight: wrapperspb.UInt32(1),
			LbEndpoints: []*endpoint.LbEndpoint{{
				HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
					Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
						Address:       host,
						PortSpecifier: &core.SocketAddress_PortValue{PortValue: port},
					}}},
				}},
			}},
		}},
	}
}

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(fmt.Sprintf("xdstest: %T: %v", m, err))
	}
	return a
}
