package xdsgen

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// grpcRouteMatch returns m, the match of IR route r, in a form proxyless
// gRPC clients accept when r comes from a GRPCRoute: a service match (a
// path prefix "/<service>/", which [routeMatch] makes the
// path_separated_prefix "/<service>") becomes the prefix "/<service>/".
// gRPC-Go's xDS client rejects a whole RouteConfiguration that holds a
// path_separated_prefix anywhere; a gRPC request's path is always
// /<service>/<method>, which both forms match alike. Routes of HTTPRoutes
// are left as they are.
func grpcRouteMatch(r *irv1.Route, m *routev3.RouteMatch) *routev3.RouteMatch {
	if !r.GetGrpc() {
		return m
	}
	if p := m.GetPathSeparatedPrefix(); p != "" {
		m.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: p + "/"}
	}
	return m
}
