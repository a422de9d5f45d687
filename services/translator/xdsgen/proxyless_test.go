package xdsgen

import (
	"fmt"
	"slices"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// hostsGateway has two ports: 9090 serves a.example, b.example and the
// wildcards, 8080 serves a.example again and c.example.
func hostsGateway() *irv1.Gateway {
	gw := gateway("default/web/80")
	route := gw.GetListeners()[0].GetVirtualHosts()[0].GetRoutes()[0]
	vhost := func(host string) *irv1.VirtualHost {
		return &irv1.VirtualHost{Name: host, Hostname: host, Routes: []*irv1.Route{route}}
	}
	gw.Listeners = []*irv1.Listener{
		{Name: "http-8080", Port: 8080, Protocol: irv1.Protocol_PROTOCOL_HTTP,
			VirtualHosts: []*irv1.VirtualHost{vhost("a.example"), vhost("c.example")}},
		{Name: "http-9090", Port: 9090, Protocol: irv1.Protocol_PROTOCOL_HTTP,
			VirtualHosts: []*irv1.VirtualHost{vhost("*.example"), vhost("a.example"), vhost("b.example"), vhost("*")}},
	}
	return gw
}

func TestProxylessListeners(t *testing.T) {
	gw := hostsGateway()
	res, err := Resources(gw)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := ProxylessListeners(gw, res)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.example": "http-8080", "b.example": "http-9090", "c.example": "http-8080"}
	var names []string
	for _, l := range ls {
		names = append(names, l.GetName())
		checkAPIListener(t, l, want[l.GetName()])
	}
	if !slices.Equal(names, []string{"a.example", "b.example", "c.example"}) {
		t.Errorf("listeners %q, want a.example, b.example, c.example", names)
	}

	// A listener Envoy is not served routes for gives no API listener:
	// a.example is then the port 9090's.
	res[resourcev3.RouteType] = slices.DeleteFunc(res[resourcev3.RouteType], func(r types.Resource) bool {
		return r.(*routev3.RouteConfiguration).GetName() == "http-8080"
	})
	ls, err = ProxylessListeners(gw, res)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].GetName() != "a.example" || ls[1].GetName() != "b.example" {
		t.Fatalf("without http-8080's routes: %v, want a.example and b.example", ls)
	}
	checkAPIListener(t, ls[0], "http-9090")
}

// checkAPIListener checks what gRPC-Go requires of an API listener: only
// an api_listener, an HTTP connection manager with RDS over ADS, the
// router as its only filter, no trusted XFF hops.
func checkAPIListener(t *testing.T, l *listenerv3.Listener, routeConfig string) {
	t.Helper()
	if l.GetAddress() != nil || len(l.GetFilterChains()) != 0 {
		t.Errorf("%s: has an address or filter chains", l.GetName())
	}
	m := &hcmv3.HttpConnectionManager{}
	if err := l.GetApiListener().GetApiListener().UnmarshalTo(m); err != nil {
		t.Fatalf("%s: %v", l.GetName(), err)
	}
	if got := m.GetRds().GetRouteConfigName(); got != routeConfig {
		t.Errorf("%s: routes from %q, want %q", l.GetName(), got, routeConfig)
	}
	if m.GetRds().GetConfigSource().GetAds() == nil {
		t.Errorf("%s: routes not over ADS", l.GetName())
	}
	if fs := m.GetHttpFilters(); len(fs) != 1 || fs[0].GetTypedConfig().GetTypeUrl() != "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" {
		t.Errorf("%s: filters %v, want the router only", l.GetName(), fs)
	}
	if m.GetXffNumTrustedHops() != 0 || len(m.GetOriginalIpDetectionExtensions()) != 0 {
		t.Errorf("%s: sets client address detection, which gRPC rejects", l.GetName())
	}
}

func TestSnapshotCarriesProxylessListeners(t *testing.T) {
	withHosts, err := Snapshot(hostsGateway())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(withHosts.GetProxylessListeners()); n != 3 {
		t.Errorf("%d proxyless listeners, want 3", n)
	}
	for _, a := range withHosts.GetProxylessListeners() {
		if a.GetTypeUrl() != "type.googleapis.com/envoy.config.listener.v3.Listener" {
			t.Errorf("proxyless listener of type %s", a.GetTypeUrl())
		}
	}
	again, err := Snapshot(hostsGateway())
	if err != nil {
		t.Fatal(err)
	}
	if withHosts.GetVersion() != again.GetVersion() {
		t.Errorf("versions %s and %s of the same gateway", withHosts.GetVersion(), again.GetVersion())
	}

	// Without exact hostnames there is no API listener, and the version is
	// the resources' alone.
	wildcard, err := Snapshot(gateway("default/web/80"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(wildcard.GetProxylessListeners()); n != 0 {
		t.Errorf("%d proxyless listeners for a wildcard virtual host, want 0", n)
	}
	res, err := Resources(gateway("default/web/80"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := pack(NodeCluster(gateway("default/web/80")), res)
	if err != nil {
		t.Fatal(err)
	}
	stamp(plain)
	if wildcard.GetVersion() != plain.GetVersion() {
		t.Errorf("version %s, want the resources' version %s", wildcard.GetVersion(), plain.GetVersion())
	}
}

// TestLoadAssignmentForGRPC checks what gRPC-Go requires of a load
// assignment: a named locality of weight at least 1, no address twice.
func TestLoadAssignmentForGRPC(t *testing.T) {
	b := &irv1.Backend{Name: "default/web/80", Endpoints: []*irv1.Endpoint{
		{Address: "10.0.0.1", Port: 8080, Ready: true},
		{Address: "10.0.0.1", Port: 8080, Ready: true}, // in two EndpointSlices
		{Address: "10.0.0.1", Port: 8081, Ready: true},
		{Address: "10.0.0.2", Port: 8080},
	}}
	cla := LoadAssignment(b)
	if err := cla.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	if len(cla.GetEndpoints()) != 1 {
		t.Fatalf("%d localities, want 1", len(cla.GetEndpoints()))
	}
	loc := cla.GetEndpoints()[0]
	if loc.GetLocality() == nil || loc.GetLoadBalancingWeight().GetValue() < 1 {
		t.Errorf("locality %v of weight %v, want a locality of weight >= 1", loc.GetLocality(), loc.GetLoadBalancingWeight())
	}
	var got []string
	for _, e := range loc.GetLbEndpoints() {
		a := e.GetEndpoint().GetAddress().GetSocketAddress()
		got = append(got, fmt.Sprintf("%s:%d", a.GetAddress(), a.GetPortValue()))
	}
	if !slices.Equal(got, []string{"10.0.0.1:8080", "10.0.0.1:8081"}) {
		t.Errorf("endpoints %q, want 10.0.0.1:8080 and 10.0.0.1:8081 once each", got)
	}
}

// TestGRPCRouteMatches checks the path matches of GRPCRoutes' routes: a
// service is the plain prefix "/<service>/", with no route for the path
// "/<service>" (not a gRPC method); an HTTPRoute's prefix also gets its
// exact path. Neither is a path_separated_prefix, which gRPC's xDS client
// rejects.
func TestGRPCRouteMatches(t *testing.T) {
	prefix := func(v string) *irv1.RouteMatch {
		return &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: v}}
	}
	backends := []*irv1.WeightedBackend{{Backend: "b", Weight: 1}}
	for _, tc := range []struct {
		name  string
		route *irv1.Route
		want  []*routev3.RouteMatch
	}{
		{"service", &irv1.Route{Match: prefix("/pkg.Svc/"), Action: &irv1.RouteAction{Grpc: true}},
			[]*routev3.RouteMatch{{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/pkg.Svc/"}}}},
		{"any method", &irv1.Route{Match: prefix("/"), Action: &irv1.RouteAction{Grpc: true}},
			[]*routev3.RouteMatch{{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}}},
		{"method", &irv1.Route{Match: &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_EXACT, Value: "/pkg.Svc/Get"}}, Action: &irv1.RouteAction{Grpc: true}},
			[]*routev3.RouteMatch{{PathSpecifier: &routev3.RouteMatch_Path{Path: "/pkg.Svc/Get"}}}},
		{"HTTPRoute prefix", &irv1.Route{Match: prefix("/api/")}, []*routev3.RouteMatch{
			{PathSpecifier: &routev3.RouteMatch_Path{Path: "/api"}},
			{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/api/"}},
		}},
	} {
		if tc.route.Action == nil {
			tc.route.Action = &irv1.RouteAction{}
		}
		tc.route.Action.Backends = backends
		routes, err := envoyRoutes(tc.route, &irv1.Listener{Port: 80})
		if err != nil {
			t.Fatal(err)
		}
		var got []*routev3.RouteMatch
		for _, r := range routes {
			got = append(got, r.GetMatch())
		}
		if !slices.EqualFunc(got, tc.want, func(a, b *routev3.RouteMatch) bool { return proto.Equal(a, b) }) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
