package xds

import (
	"context"
	"slices"
	"testing"
	"time"

	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	sotwclient "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// The gateway of the tests.
const gateway = "ns/gw"

var gatewayKey = bus.GatewayKey("ns", "gw")

// served are the types an Envoy asks for, with the names of the resources
// of the sample snapshot; it has no secrets.
var served = []struct {
	typeURL string
	names   []string
}{
	{resource.ClusterType, []string{xdstest.ClusterName}},
	{resource.EndpointType, []string{xdstest.ClusterName}},
	{resource.ListenerType, []string{xdstest.ListenerName}},
	{resource.RouteType, []string{xdstest.RouteName}},
	{resource.SecretType, nil},
}

// movedBackend is the sample at version with its endpoint on port.
func movedBackend(t *testing.T, version string, port uint32) *busv1.XdsSnapshot {
	t.Helper()
	snap, err := xdstest.Snapshot(gateway, version,
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", port),
	)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestServe(t *testing.T) {
	h := start(t, bustest.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))

	clients := map[string]sotwclient.ADSClient{}
	t.Run("state of the world", func(t *testing.T) {
		for _, typ := range served {
			c := sotwclient.NewADSClient(ctx, node(gateway), typ.typeURL)
			if err := c.InitConnect(h.conn); err != nil {
				t.Fatalf("%s: connect: %v", typ.typeURL, err)
			}
			clients[typ.typeURL] = c
			fetchAndAck(t, c, typ.typeURL, typ.names)
			// The ACK carries the version the client received.
			h.waitCount(t, 1, "gatewire_xds_acks_total", attrs(gateway, typ.typeURL)...)
			h.waitAck(t, false, typ.typeURL, "v1")
		}
	})
	t.Run("new version", func(t *testing.T) {
		h.put(t, gatewayKey, movedBackend(t, "v2", 9090))
		for _, typ := range served {
			got := fetchAndAck(t, clients[typ.typeURL], typ.typeURL, typ.names)
			h.waitAck(t, false, typ.typeURL, "v2")
			if typ.typeURL == resource.EndpointType {
				checkPort(t, got[0], 9090)
			}
		}
	})
	t.Run("delta", func(t *testing.T) { deltaFetchAndAck(t, h, ctx) })
	t.Run("nack", func(t *testing.T) { nackCounted(t, h, ctx) })
	t.Run("other cluster gets nothing", func(t *testing.T) { expectNothing(t, h, "ns/other") })
	t.Run("empty cluster is refused", func(t *testing.T) { emptyClusterRefused(t, h, ctx) })
	t.Run("delete", func(t *testing.T) { deleteEmpties(t, h, clients) })
}

// deleteEmpties deletes the gateway and checks that its connected clients
// are sent the empty snapshot at a new version, and that a client that
// connects later gets it too.
func deleteEmpties(t *testing.T, h *harness, clients map[string]sotwclient.ADSClient) {
	t.Helper()
	lds := openADS(t, h.conn, gateway, resource.ListenerType, "")
	if resp := lds.recv(t); resp.GetVersionInfo() != "v2" || len(resp.GetResources()) != 1 {
		t.Fatalf("listeners at %q: %d, want 1 at v2", resp.GetVersionInfo(), len(resp.GetResources()))
	}
	lds.ack(t)
	if err := h.bus.Delete(context.Background(), bus.XDS, gatewayKey); err != nil {
		t.Fatal(err)
	}
	if resp := lds.recv(t); resp.GetVersionInfo() != deletedVersion || len(resp.GetResources()) != 0 {
		t.Fatalf("after the delete: listeners at %q: %d, want none at %q", resp.GetVersionInfo(), len(resp.GetResources()), deletedVersion)
	}
	lds.ack(t)
	h.waitAck(t, false, resource.ListenerType, deletedVersion)
	for _, typ := range served {
		fetchAndAck(t, clients[typ.typeURL], typ.typeURL, nil)
	}
	later := openADS(t, h.conn, gateway, resource.ClusterType, "")
	if resp := later.recv(t); resp.GetVersionInfo() != deletedVersion || len(resp.GetResources()) != 0 {
		t.Fatalf("a new client of a deleted gateway got %d clusters at %q", len(resp.GetResources()), resp.GetVersionInfo())
	}
}

// nackCounted NACKs a response and checks that the NACK is counted and
// logged with the client's error detail.
func nackCounted(t *testing.T, h *harness, ctx context.Context) {
	t.Helper()
	c := sotwclient.NewADSClient(ctx, node(gateway), resource.ClusterType)
	if err := c.InitConnect(h.conn); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(); err != nil {
		t.Fatal(err)
	}
	if err := c.Nack("cluster backend: no healthy upstream config"); err != nil {
		t.Fatal(err)
	}
	h.waitCount(t, 1, "gatewire_xds_nacks_total", attrs(gateway, resource.ClusterType)...)
	// The counter moves before the log line is written: wait for the line.
	nackLines := func() []string {
		return h.logs.Lines(`"msg":"xds nack"`, `"gateway":"ns/gw"`, `"version":"v2"`,
			`"error_detail":"cluster backend: no healthy upstream config"`)
	}
	testkit.Eventually(t, 5*time.Second, "the nack log line", func() bool { return len(nackLines()) > 0 })
	if len(nackLines()) != 1 {
		t.Errorf("want one nack log line with the error detail, got:\n%s", h.logs.Lines("nack"))
	}
}

// emptyClusterRefused checks that a node without a cluster is refused.
func emptyClusterRefused(t *testing.T, h *harness, ctx context.Context) {
	t.Helper()
	c := sotwclient.NewADSClient(ctx, node(""), resource.ListenerType)
	if err := c.InitConnect(h.conn); err != nil {
		t.Fatal(err)
	}
	_, err := c.Fetch()
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Fetch with an empty node.cluster: %v, want InvalidArgument", err)
	}
	if len(h.logs.Lines("node has no cluster")) == 0 {
		t.Error("the refusal is not logged")
	}
}

// fetchAndAck waits for the client's next response, checks the names of
// its resources, ACKs it and returns the resources.
func fetchAndAck(t *testing.T, c sotwclient.ADSClient, typeURL string, names []string) []proto.Message {
	t.Helper()
	resp, err := c.Fetch()
	if err != nil {
		t.Fatalf("%s: fetch: %v", typeURL, err)
	}
	got := decodeAll(t, typeURL, resp.Resources)
	checkNames(t, typeURL, got, names)
	if err := c.Ack(); err != nil {
		t.Fatalf("%s: ack: %v", typeURL, err)
	}
	return got
}

// deltaFetchAndAck asks for every type on one delta ADS stream, checks what
// arrives and ACKs it.
func deltaFetchAndAck(t *testing.T, h *harness, ctx context.Context) {
	t.Helper()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.CloseSend() }()
	for i, typ := range served {
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: typ.typeURL}
		if i == 0 { // as Envoy does: the node only in the first request
			req.Node = node(gateway)
		}
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("%s: %v", typ.typeURL, err)
		}
		if resp.GetTypeUrl() != typ.typeURL || resp.GetSystemVersionInfo() != "v2" {
			t.Fatalf("delta response for %s at %q, want %s at v2", resp.GetTypeUrl(), resp.GetSystemVersionInfo(), typ.typeURL)
		}
		var anys []*anypb.Any
		for _, r := range resp.GetResources() {
			anys = append(anys, r.GetResource())
		}
		checkNames(t, typ.typeURL, decodeAll(t, typ.typeURL, anys), typ.names)
		ack := &discovery.DeltaDiscoveryRequest{TypeUrl: typ.typeURL, ResponseNonce: resp.GetNonce()}
		if err := stream.Send(ack); err != nil {
			t.Fatal(err)
		}
		h.waitAck(t, true, typ.typeURL, "v2")
	}
}

// expectNothing checks that a client of nodeCluster gets no response.
func expectNothing(t *testing.T, h *harness, nodeCluster string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	c := sotwclient.NewADSClient(ctx, node(nodeCluster), resource.ListenerType)
	if err := c.InitConnect(h.conn); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Fetch()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("%s got %v, %v; want nothing until the deadline", nodeCluster, resp, err)
	}
}

func decodeAll(t *testing.T, typeURL string, anys []*anypb.Any) []proto.Message {
	t.Helper()
	out := make([]proto.Message, 0, len(anys))
	for _, a := range anys {
		if a.GetTypeUrl() != typeURL {
			t.Fatalf("resource of type %s in a %s response", a.GetTypeUrl(), typeURL)
		}
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func checkNames(t *testing.T, typeURL string, got []proto.Message, want []string) {
	t.Helper()
	var names []string
	for _, m := range got {
		names = append(names, cache.GetResourceName(m))
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("%s: got %v, want %v", typeURL, names, want)
	}
}

func checkPort(t *testing.T, m proto.Message, want uint32) {
	t.Helper()
	cla := m.(*endpoint.ClusterLoadAssignment)
	got := cla.GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetPortValue()
	if got != want {
		t.Fatalf("endpoint port %d, want %d", got, want)
	}
}

// TestNATSGone checks that the last snapshot is still served to a new
// client after the NATS server stops.
func TestNATSGone(t *testing.T) {
	srv := bustest.Server(t)
	h := start(t, bustest.Open(t, bustest.Connect(t, srv)))
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	h.waitVersion(t, gateway, "v1")

	srv.Shutdown()
	srv.WaitForShutdown()

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c := sotwclient.NewADSClient(ctx, node(gateway), resource.ListenerType)
	if err := c.InitConnect(h.conn); err != nil {
		t.Fatal(err)
	}
	fetchAndAck(t, c, resource.ListenerType, []string{xdstest.ListenerName})
	h.waitAck(t, false, resource.ListenerType, "v1")
	if !h.svc.Ready() {
		t.Error("not ready after NATS stopped")
	}
}
