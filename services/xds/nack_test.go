package xds

import (
	"context"
	"errors"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// quiet is how long a test waits to see that nothing more arrives.
const quiet = time.Second

// TestGRPCClientNACK serves gRPC-Go's xDS client, as a proxyless node, an
// API listener it rejects, checks that the rejection is not resent, and
// that it is reported in the status bucket until a fixed version is ACKed,
// with its routes, cluster and endpoints.
func TestGRPCClientNACK(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, grpcSnapshot(t, "v1", 1))
	h.waitVersion(t, gateway, "v1")
	startGRPCClient(t, h.svc.Addr().String(), gateway)

	nacks := func() int64 {
		return h.count(t, "gatewire_xds_nacks_total", attrs(gateway, resource.ListenerType)...)
	}
	testkit.Eventually(t, wait, "gRPC's NACK of v1", func() bool { return nacks() > 0 })
	first := nacks()
	time.Sleep(2 * time.Second)
	more := nacks() - first
	t.Logf("NACKs of v1 in the 2s after the first: %d", more)
	if more >= 20 {
		t.Fatalf("%d NACKs in 2s after the first: the rejected version is being resent", more)
	}
	if lines := h.logs.Lines(`"msg":"xds nack"`, `"version":"v1"`, "xff_num_trusted_hops"); len(lines) != 1 {
		t.Errorf("%d nack log lines with gRPC's error detail, want 1:\n%s", len(lines), lines)
	}
	st := h.waitStatus(t, "v1", resource.ListenerType, "xff_num_trusted_hops must be unset or zero")
	checkNotProgrammed(t, st)

	h.put(t, gatewayKey, grpcSnapshot(t, "v2", 0))
	for _, typeURL := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType} {
		h.waitAck(t, false, typeURL, "v2")
	}
	h.waitNoStatus(t)
}

// checkNotProgrammed checks the fields of a data-plane status entry of
// ns/gw.
func checkNotProgrammed(t *testing.T, st *busv1.Status) {
	t.Helper()
	for _, ref := range []*busv1.ObjectRef{st.GetObject(), st.GetGateway()} {
		if ref.GetGroup() != "gateway.networking.k8s.io" || ref.GetKind() != "Gateway" ||
			ref.GetNamespace() != "ns" || ref.GetName() != "gw" {
			t.Errorf("status entry of %v, want Gateway ns/gw", ref)
		}
	}
	c := st.GetConditions()[0]
	if c.GetType() != "Programmed" || c.GetStatus() != "False" || c.GetReason() != "Invalid" {
		t.Errorf("condition %s=%s (%s), want Programmed=False (Invalid)", c.GetType(), c.GetStatus(), c.GetReason())
	}
}

// TestNACKHeld rejects versions on raw streams and checks what the server
// sends after each NACK, and the status entry.
func TestNACKHeld(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	h.waitVersion(t, gateway, "v1")

	lds := openADS(t, h.conn, gateway, resource.ListenerType, "")
	lds.recv(t)
	lds.nack(t, "listener http-10080: port in use")
	lds.expectNone(t, quiet)
	h.waitCount(t, 1, "gatewire_xds_nacks_total", attrs(gateway, resource.ListenerType)...)
	checkNotProgrammed(t, h.waitStatus(t, `"envoy-ns-gw"`, "v1", resource.ListenerType, "port in use"))
	checkStreamNACK(t, h, "v1", "listener http-10080: port in use")

	t.Run("a new version is sent", func(t *testing.T) {
		h.put(t, gatewayKey, movedBackend(t, "v2", 9090))
		if resp := lds.recv(t); resp.GetVersionInfo() != "v2" {
			t.Fatalf("after the NACK of v1: %q, want v2", resp.GetVersionInfo())
		}
		lds.nack(t, "listener http-10080: port still in use")
		lds.expectNone(t, quiet)
		h.waitStatus(t, "v2", "port still in use")
		lds.ack(t) // as if the port were free now; not a later version
		time.Sleep(100 * time.Millisecond)
		h.waitStatus(t, "v2", "port still in use")
	})
	t.Run("a NACK of an old version is answered", func(t *testing.T) {
		cds := openADS(t, h.conn, gateway, resource.ClusterType, "")
		cds.recv(t)
		h.put(t, gatewayKey, xdstest.Sample(gateway, "v3"))
		h.waitVersion(t, gateway, "v3")
		cds.nack(t, "cluster backend: bad") // of v2
		if resp := cds.recv(t); resp.GetVersionInfo() != "v3" {
			t.Fatalf("after a NACK of v2 with v3 current: %q, want v3", resp.GetVersionInfo())
		}
		cds.ack(t)
	})
	t.Run("a later version is ACKed", func(t *testing.T) {
		if resp := lds.recv(t); resp.GetVersionInfo() != "v3" {
			t.Fatalf("%q, want v3", resp.GetVersionInfo())
		}
		lds.ack(t)
		h.waitNoStatus(t)
	})
}

// TestNACKStatusLifetime checks when a data-plane status entry goes away:
// when the rejecting client disconnects, when the gateway is deleted, when
// the replica stops, and, at start, when an earlier run left it behind.
func TestNACKStatusLifetime(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	leftover := bus.DataPlaneStatusKey("ns", "left", "xds-0")
	if _, err := b.Put(ctx, bus.Status, leftover, &busv1.Status{}); err != nil {
		t.Fatal(err)
	}
	h := start(t, b)
	testkit.Eventually(t, wait, "the leftover entry deleted", func() bool {
		_, err := b.Get(ctx, bus.Status, leftover)
		return errors.Is(err, bus.ErrNotFound)
	})
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	h.waitVersion(t, gateway, "v1")
	rejectOnce := func(t *testing.T) {
		t.Helper()
		lds := openADS(t, h.conn, gateway, resource.ListenerType, "")
		lds.recv(t)
		lds.nack(t, "no")
		h.waitStatus(t, "v1", "no")
	}

	t.Run("client disconnects", func(t *testing.T) {
		rejectOnce(t)
	}) // the stream ends with the subtest
	h.waitNoStatus(t)
	t.Run("gateway deleted", func(t *testing.T) {
		rejectOnce(t)
		if err := b.Delete(ctx, bus.XDS, gatewayKey); err != nil {
			t.Fatal(err)
		}
		h.waitNoStatus(t)
		h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
		h.waitVersion(t, gateway, "v1")
	})
	t.Run("replica stops", func(t *testing.T) {
		rejectOnce(t)
		h.stop()
		if st := h.statusEntry(t, "ns", "gw"); st != nil {
			t.Fatalf("entry left after the replica stopped: %v", st)
		}
	})
}

// TestDeltaNACKNotResent checks that a delta client that rejects a
// response is not sent it again.
func TestDeltaNACKNotResent(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	h.waitVersion(t, gateway, "v1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discovery.DeltaDiscoveryRequest{Node: node(gateway), TypeUrl: resource.ListenerType}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	nack := &discovery.DeltaDiscoveryRequest{
		TypeUrl: resource.ListenerType, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: "no"},
	}
	if err := stream.Send(nack); err != nil {
		t.Fatal(err)
	}
	h.waitCount(t, 1, "gatewire_xds_nacks_total", attrs(gateway, resource.ListenerType)...)
	h.waitStatus(t, "v1", "no")
	got := make(chan *discovery.DeltaDiscoveryResponse, 1)
	go func() {
		if r, err := stream.Recv(); err == nil {
			got <- r
		}
	}()
	select {
	case r := <-got:
		t.Fatalf("the rejected response was sent again at %q", r.GetSystemVersionInfo())
	case <-time.After(quiet):
	}
	cancel()
}

// checkStreamNACK checks that Streams shows the listener stream's NACK of
// version with detail, and what it serves and sent.
func checkStreamNACK(t *testing.T, h *harness, version, detail string) {
	t.Helper()
	for _, st := range h.svc.Streams() {
		for _, ts := range st.Types {
			if ts.TypeURL != resource.ListenerType || ts.NACK == nil {
				continue
			}
			if st.NodeID != "envoy-ns-gw" || st.Gateway != gateway || st.Delta || st.Proxyless || st.ConnectedSince.IsZero() {
				t.Errorf("stream %+v", st)
			}
			if ts.NACK.Version != version || ts.NACK.Detail != detail || ts.Served != version || ts.Sent != version || ts.Acked != "" {
				t.Errorf("listeners %+v, NACK %+v; want %s served, sent and rejected with %q, nothing acked", ts, *ts.NACK, version, detail)
			}
			return
		}
	}
	t.Errorf("no stream shows a NACK of the listeners: %+v", h.svc.Streams())
}
