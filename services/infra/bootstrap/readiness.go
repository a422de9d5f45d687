package bootstrap

import (
	"errors"
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	// ReadinessListenerName is the static listener that serves ReadyPath on
	// Options.ReadinessPort.
	ReadinessListenerName = "gatewire_readiness"
	// AdminClusterName is the static cluster that points at the admin
	// interface, the upstream of the readiness listener.
	AdminClusterName = "gatewire_admin"
	// ReadyPath is Envoy's admin endpoint that answers 200 once the server is
	// initialized (its first listeners and clusters received) and 503 while it
	// starts or drains.
	ReadyPath = "/ready"

	hcmName    = "envoy.filters.network.http_connection_manager"
	routerName = "envoy.filters.http.router"
)

// errReadinessNeedsAdminPort is returned when a readiness listener is asked for
// with an admin port chosen by Envoy: the listener needs a fixed upstream.
var errReadinessNeedsAdminPort = errors.New("a readiness port needs a fixed admin port")

// readiness returns the listener on 0.0.0.0:port that forwards GET /ready to
// the admin interface on adminPort, and the cluster of the admin interface.
// The admin interface stays on loopback; only /ready is reachable from the
// outside (a kubelet probe), every other path gets a 404.
func readiness(port, adminPort uint32) (*listenerv3.Listener, *clusterv3.Cluster, error) {
	if adminPort == 0 {
		return nil, nil, errReadinessNeedsAdminPort
	}
	if port == adminPort {
		return nil, nil, fmt.Errorf("readiness port %d: same as the admin port", port)
	}
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, nil, fmt.Errorf("readiness router: %w", err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix:     ReadinessListenerName,
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: readinessRoutes()},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       routerName,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("readiness connection manager: %w", err)
	}
	l := &listenerv3.Listener{
		Name:    ReadinessListenerName,
		Address: socketAddress("0.0.0.0", port),
		FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{{
				Name:       hcmName,
				ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
			}},
		}},
	}
	return l, adminCluster(adminPort), nil
}

func readinessRoutes() *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{
		Name: ReadinessListenerName,
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    ReadinessListenerName,
			Domains: []string{"*"},
			Routes: []*routev3.Route{
				{
					// Only GET /ready is forwarded, so the admin interface's
					// POST endpoints stay out of reach.
					Match: &routev3.RouteMatch{
						PathSpecifier: &routev3.RouteMatch_Path{Path: ReadyPath},
						Headers:       []*routev3.HeaderMatcher{getOnly()},
					},
					Action: &routev3.Route_Route{Route: &routev3.RouteAction{
						ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: AdminClusterName},
					}},
				},
				{
					Match: &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
					Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
						Status: 404,
					}},
				},
			},
		}},
	}
}

func adminCluster(adminPort uint32) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 AdminClusterName,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(xdsConnectTimeout),
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: AdminClusterName,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{
						Endpoint: &endpointv3.Endpoint{Address: socketAddress(AdminAddress, adminPort)},
					},
				}},
			}},
		},
	}
}

// getOnly matches GET requests.
func getOnly() *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{
		Name: ":method",
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
			MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "GET"},
		}},
	}
}
