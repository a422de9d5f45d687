package xdstest

import (
	"fmt"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// ManyRoutesListener is the listener (and route configuration) of
// [ManyRoutes].
const ManyRoutesListener = "bench/eg/http"

// ManyRoutes is a snapshot of the shape the translator gives the
// gatewaytest.ManyRoutes(n) gateway: one HTTP listener on port 80 whose
// route configuration holds a virtual host per route (host
// route-<i>.example.com, prefixes /api and /web that need the header
// x-tenant: t<i>, a request header x-route set to revision, two clusters
// weighted 80/20), and two EDS clusters per route with three endpoints
// each. Editing revision of one route (edited) changes only the route
// configuration.
func ManyRoutes(nodeCluster, version string, n, edited int, revision string) *busv1.XdsSnapshot {
	msgs := []proto.Message{Listener(ManyRoutesListener, 80, ManyRoutesListener)}
	rc := &route.RouteConfiguration{Name: ManyRoutesListener}
	for i := range n {
		rev := "r0"
		if i == edited {
			rev = revision
		}
		rc.VirtualHosts = append(rc.VirtualHosts, tenantHost(i, rev))
		for _, s := range []string{"a", "b"} {
			name := fmt.Sprintf("bench/svc-%d-%s/80", i, s)
			msgs = append(msgs, Cluster(name), threeEndpoints(name, i))
		}
	}
	msgs = append(msgs, rc)
	snap, err := Snapshot(nodeCluster, version, msgs...)
	if err != nil {
		panic(fmt.Sprintf("xdstest: many routes: %v", err)) // fixed, valid messages always marshal
	}
	return snap
}

func tenantHost(i int, revision string) *route.VirtualHost {
	host := fmt.Sprintf("route-%d.example.com", i)
	weighted := &route.WeightedCluster{Clusters: []*route.WeightedCluster_ClusterWeight{
		{Name: fmt.Sprintf("bench/svc-%d-a/80", i), Weight: wrapperspb.UInt32(80)},
		{Name: fmt.Sprintf("bench/svc-%d-b/80", i), Weight: wrapperspb.UInt32(20)},
	}}
	vh := &route.VirtualHost{Name: host, Domains: []string{host, host + ":*"}}
	for _, prefix := range []string{"/api", "/web"} {
		vh.Routes = append(vh.Routes, &route.Route{
			Name: fmt.Sprintf("httproute/bench/route-%d/rule/0/match%s", i, prefix),
			Match: &route.RouteMatch{
				PathSpecifier: &route.RouteMatch_Prefix{Prefix: prefix},
				Headers: []*route.HeaderMatcher{{
					Name: "x-tenant",
					HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{StringMatch: &matcher.StringMatcher{
						MatchPattern: &matcher.StringMatcher_Exact{Exact: fmt.Sprintf("t%d", i)},
					}},
				}},
			},
			Action: &route.Route_Route{Route: &route.RouteAction{
				ClusterSpecifier: &route.RouteAction_WeightedClusters{WeightedClusters: weighted},
			}},
			RequestHeadersToAdd: []*core.HeaderValueOption{{
				Header:         &core.HeaderValue{Key: "x-route", Value: fmt.Sprintf("route-%d-%s", i, revision)},
				AppendAction:   core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
				KeepEmptyValue: false,
			}},
		})
	}
	return vh
}

func threeEndpoints(clusterName string, i int) proto.Message {
	cla := LoadAssignment(clusterName, fmt.Sprintf("10.%d.%d.1", i/256, i%256), BackendPort)
	for e := 2; e <= 3; e++ {
		more := LoadAssignment(clusterName, fmt.Sprintf("10.%d.%d.%d", i/256, i%256, e), BackendPort)
		cla.Endpoints[0].LbEndpoints = append(cla.Endpoints[0].LbEndpoints, more.Endpoints[0].LbEndpoints...)
	}
	return cla
}

// WithTypeVersions gives each type of x a version that is a hash of its
// resources, and of the clusters for endpoints and of the listeners for
// route configurations, as the translator does, and returns x.
func WithTypeVersions(x *busv1.XdsSnapshot) *busv1.XdsSnapshot {
	sums := map[string]string{}
	for _, t := range x.GetResources() {
		var all []byte
		for _, a := range t.GetResources() {
			all = append(all, a.GetValue()...)
		}
		sums[t.GetTypeUrl()] = xdsbucket.Version(all)
	}
	with := map[string]string{xdsbucket.EndpointType: xdsbucket.ClusterType, xdsbucket.RouteType: xdsbucket.ListenerType}
	for _, t := range x.GetResources() {
		t.Version = sums[t.GetTypeUrl()] + sums[with[t.GetTypeUrl()]]
	}
	return x
}
