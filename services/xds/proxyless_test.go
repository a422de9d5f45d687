package xds

import (
	"context"
	"slices"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// proxylessNode is a proxyless gRPC client of nodeCluster.
func proxylessNode(t *testing.T, nodeCluster string) *core.Node {
	t.Helper()
	md, err := structpb.NewStruct(map[string]any{ProxylessMetadataKey: true})
	if err != nil {
		t.Fatal(err)
	}
	return &core.Node{Id: "grpc-" + nodeCluster, Cluster: nodeCluster, Metadata: md}
}

// proxylessSample is the sample snapshot with a second cluster, "other",
// and API listeners with the given names, all on the sample routes.
func proxylessSample(t *testing.T, version string, apiListeners ...string) *busv1.XdsSnapshot {
	t.Helper()
	x := mustSnapshot(t, version,
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort),
		xdstest.Cluster("other"),
		xdstest.LoadAssignment("other", "127.0.0.1", 9090),
	)
	for _, name := range apiListeners {
		x.ProxylessListeners = append(x.ProxylessListeners, mustAny(t, xdstest.APIListener(name, xdstest.RouteName)))
	}
	return x
}

func TestIsProxyless(t *testing.T) {
	value := func(v any) *structpb.Struct {
		s, err := structpb.NewStruct(map[string]any{ProxylessMetadataKey: v})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		node *core.Node
		want bool
	}{
		{"envoy", &core.Node{Cluster: "ns/gw"}, false},
		{"proxyless", &core.Node{Cluster: "ns/gw", Metadata: value(true)}, true},
		{"proxyless as a string", &core.Node{Cluster: "ns/gw", Metadata: value("true")}, true},
		{"marker false", &core.Node{Cluster: "ns/gw", Metadata: value(false)}, false},
		{"marker of another type", &core.Node{Cluster: "ns/gw", Metadata: value(1.0)}, false},
		{"no node", nil, false},
	} {
		if got := isProxyless(tc.node); got != tc.want {
			t.Errorf("%s: isProxyless = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestProxylessServedAPIListeners checks that a proxyless node gets the
// gateway's API listeners and only what it names, that an Envoy of the
// same gateway still gets its listeners, and that removed listeners and a
// deleted gateway reach the proxyless node.
func TestProxylessServedAPIListeners(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example", "b.example"))
	h.waitVersion(t, gateway, "v1")
	grpcNode := proxylessNode(t, gateway)

	envoy := openADS(t, h.conn, gateway, resource.ListenerType, "")
	if got := names(t, envoy.recv(t)); !slices.Equal(got, []string{xdstest.ListenerName}) {
		t.Errorf("Envoy listeners %q, want %s", got, xdstest.ListenerName)
	}
	lds := openADSAs(t, h.conn, grpcNode, resource.ListenerType, "", "a.example", "b.example")
	if got := names(t, lds.recv(t)); !slices.Equal(got, []string{"a.example", "b.example"}) {
		t.Errorf("proxyless listeners %q, want a.example and b.example", got)
	}
	lds.ack(t)
	// In ADS mode a request that names part of the snapshot's resources
	// would never be answered.
	cds := openADSAs(t, h.conn, grpcNode, resource.ClusterType, "", xdstest.ClusterName)
	if got := names(t, cds.recv(t)); !slices.Equal(got, []string{xdstest.ClusterName}) {
		t.Errorf("clusters %q, want %s", got, xdstest.ClusterName)
	}
	missing := openADSAs(t, h.conn, grpcNode, resource.ListenerType, "", "missing.example")
	if resp := missing.recv(t); resp.GetVersionInfo() != "v1" || len(resp.GetResources()) != 0 {
		t.Errorf("a listener not in the snapshot: %d resources at %q, want none at v1", len(resp.GetResources()), resp.GetVersionInfo())
	}

	h.put(t, gatewayKey, proxylessSample(t, "v2", "a.example"))
	resp := lds.recv(t)
	if got := names(t, resp); resp.GetVersionInfo() != "v2" || !slices.Equal(got, []string{"a.example"}) {
		t.Errorf("after b.example went: %q at %q, want a.example at v2", got, resp.GetVersionInfo())
	}
	lds.ack(t)

	if err := h.bus.Delete(context.Background(), bus.XDS, gatewayKey); err != nil {
		t.Fatal(err)
	}
	resp = lds.recv(t)
	if resp.GetVersionInfo() != deletedVersion || len(resp.GetResources()) != 0 {
		t.Errorf("after the gateway was deleted: %d listeners at %q, want none at %q", len(resp.GetResources()), resp.GetVersionInfo(), deletedVersion)
	}
}

// TestProxylessNACKHeld rejects a proxyless snapshot on a raw stream and
// checks that it is held until the version changes, as for Envoys.
func TestProxylessNACKHeld(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example"))
	h.waitVersion(t, gateway, "v1")
	lds := openADSAs(t, h.conn, proxylessNode(t, gateway), resource.ListenerType, "", "a.example")
	lds.recv(t)
	lds.nack(t, "bad listener")
	lds.expectNone(t, quiet)
	h.waitStatus(t, "v1", resource.ListenerType, "bad listener")
	h.put(t, gatewayKey, proxylessSample(t, "v2", "a.example"))
	if resp := lds.recv(t); resp.GetVersionInfo() != "v2" {
		t.Fatalf("after the NACK of v1: %q, want v2", resp.GetVersionInfo())
	}
	lds.ack(t)
	h.waitNoStatus(t)
}

// TestProxylessSnapshotsMatchTheEnvoys checks the proxyless snapshot the
// feed stores: the API listeners, no secrets, and the Envoy snapshot's
// routes, clusters and endpoints, all at the same version.
func TestProxylessSnapshotsMatchTheEnvoys(t *testing.T) {
	h := start(t, bustest.New(t))
	x := proxylessSample(t, "v1", "a.example")
	secret := &tls.Secret{Name: "ns/cert", Type: &tls.Secret_GenericSecret{GenericSecret: &tls.GenericSecret{
		Secret: &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: "key"}},
	}}}
	x.Resources = append(x.Resources, &busv1.TypedResources{TypeUrl: resource.SecretType, Resources: []*anypb.Any{mustAny(t, secret)}})
	h.put(t, gatewayKey, x)
	h.waitVersion(t, gateway, "v1")
	envoy, grpc := h.svc.store.snapshot(gateway, false), h.svc.store.snapshot(gateway, true)
	for i, typeURL := range typeURLs {
		if v := grpc.types[i].version; v != "v1" {
			t.Errorf("proxyless %s at %q, want v1", typeURL, v)
		}
		got, want := grpc.types[i].names.names, envoy.types[i].names.names
		switch typeURL {
		case resource.ListenerType:
			if !slices.Equal(got, []string{"a.example"}) {
				t.Errorf("proxyless listeners %v, want a.example", got)
			}
			continue
		case resource.SecretType:
			if len(got) != 0 || len(want) != 1 {
				t.Errorf("secrets %v for proxyless clients, %v for Envoys; want none and ns/cert", got, want)
			}
			continue
		}
		if !slices.Equal(got, want) || grpc.types[i] != envoy.types[i] {
			t.Errorf("proxyless %s %v, want the Envoys' %v, shared", typeURL, got, want)
		}
	}
}

// TestUnmarkedGRPCClientLogged checks that a gRPC client that is not
// marked proxyless is told about the marker, once.
func TestUnmarkedGRPCClientLogged(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example"))
	h.waitVersion(t, gateway, "v1")
	unmarked := &core.Node{Id: "grpc-unmarked", Cluster: gateway, UserAgentName: "gRPC Go"}
	lds := openADSAs(t, h.conn, unmarked, resource.ListenerType, "")
	lds.recv(t)
	lds.ack(t)
	testkit.Eventually(t, wait, "the warning", func() bool {
		return len(h.logs.Lines(`"msg":"gRPC xds client not marked proxyless`, `"node":"grpc-unmarked"`, ProxylessMetadataKey)) == 1
	})
	marked := proxylessNode(t, gateway)
	marked.UserAgentName = "gRPC Go"
	openADSAs(t, h.conn, marked, resource.ListenerType, "", "a.example").recv(t)
	if lines := h.logs.Lines(`"msg":"gRPC xds client not marked proxyless`); len(lines) != 1 {
		t.Errorf("%d warnings, want 1 (for the unmarked client only):\n%s", len(lines), lines)
	}
}

// badProxylessValues are values whose Envoy part is good and whose API
// listeners are not: each is rejected as a whole.
func badProxylessValues(t *testing.T) []badValue {
	t.Helper()
	notAPI := proxylessSample(t, "p1")
	notAPI.ProxylessListeners = append(notAPI.ProxylessListeners,
		mustAny(t, xdstest.Listener("envoy-style", 10081, xdstest.RouteName)))
	noRoutes := proxylessSample(t, "p2")
	noRoutes.ProxylessListeners = append(noRoutes.ProxylessListeners,
		mustAny(t, xdstest.APIListener("a.example", "missing-routes")))
	otherType := clusterResource(t, "c")
	otherType.Proxyless = true
	return []badValue{
		{name: "proxyless listener not an API listener", gateway: gateway, value: notAPI, logs: "not an api_listener"},
		{name: "proxyless listener without its routes", gateway: gateway, value: noRoutes, logs: "missing-routes"},
		{name: "proxyless listener of another type", gateway: gateway, suffix: "api.Yw", value: otherType, logs: "want a listener"},
	}
}

func names(t *testing.T, resp *discovery.DiscoveryResponse) []string {
	t.Helper()
	var out []string
	for _, a := range resp.GetResources() {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cache.GetResourceName(m))
	}
	slices.Sort(out)
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
