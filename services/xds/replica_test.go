package xds

import (
	"context"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestReplicas runs two replicas on one bus. Clients of replica A move to
// replica B when A stops; B serves them the same version and resources,
// and sends nothing to a client that names the version it has, until the
// version changes.
func TestReplicas(t *testing.T) {
	b := bustest.New(t)
	a, bb := startReplica(t, b, "xds-a"), startReplica(t, b, "xds-b")
	a.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	a.waitVersion(t, gateway, "v1")
	bb.waitVersion(t, gateway, "v1")

	// The clients of A: one stream per type, asking for the sample's names
	// (or all: typ.names is nil for secrets), and what they received.
	got := map[string]*discovery.DiscoveryResponse{}
	for _, typ := range served {
		s := openADS(t, a.conn, gateway, typ.typeURL, "", typ.names...)
		got[typ.typeURL] = s.recv(t)
		s.ack(t)
	}
	deltaHad := versionsOf(deltaFetch(t, a, nil))
	if len(deltaHad) != 1 {
		t.Fatalf("delta listeners from A: %v", deltaHad)
	}
	a.stop()

	// The same clients on B, naming the version they have; a second set
	// also names the nonce of A's last response, as clients that move
	// from a replica that died may.
	moved, movedWithNonce := map[string]*adsStream{}, map[string]*adsStream{}
	for _, typ := range served {
		moved[typ.typeURL] = openADS(t, bb.conn, gateway, typ.typeURL, "v1", typ.names...)
		movedWithNonce[typ.typeURL] = openADSWith(t, bb.conn, &discovery.DiscoveryRequest{Node: node(gateway),
			TypeUrl: typ.typeURL, VersionInfo: "v1", ResourceNames: typ.names, ResponseNonce: got[typ.typeURL].GetNonce()})
	}
	time.Sleep(quiet)
	for _, s := range movedWithNonce {
		s.expectNone(t, 0)
	}
	for typeURL, s := range moved {
		s.expectNone(t, 0)
		fresh := openADS(t, bb.conn, gateway, typeURL, "", s.names...)
		if resp := fresh.recv(t); !sameResources(t, resp, got[typeURL]) {
			t.Errorf("%s: B serves %q with %d resources, A served %q with %d", typeURL,
				resp.GetVersionInfo(), len(resp.GetResources()), got[typeURL].GetVersionInfo(), len(got[typeURL].GetResources()))
		}
	}
	if resp := deltaFetch(t, bb, deltaHad); len(resp.GetResources()) != 0 || len(resp.GetRemovedResources()) != 0 {
		t.Errorf("a delta client with A's listeners got %d listeners and %d removals from B",
			len(resp.GetResources()), len(resp.GetRemovedResources()))
	}

	bb.put(t, gatewayKey, movedBackend(t, "v2", 9090))
	for typeURL, s := range moved {
		if resp := s.recv(t); resp.GetVersionInfo() != "v2" {
			t.Errorf("%s: moved client got %q, want v2", typeURL, resp.GetVersionInfo())
		}
	}
	for typeURL, s := range movedWithNonce {
		if resp := s.recv(t); resp.GetVersionInfo() != "v2" {
			t.Errorf("%s: moved client naming A's nonce got %q, want v2", typeURL, resp.GetVersionInfo())
		}
	}
}

// sameResources reports whether two responses hold the same version and
// resources, in any order.
func sameResources(t *testing.T, x, y *discovery.DiscoveryResponse) bool {
	t.Helper()
	if x.GetVersionInfo() != y.GetVersionInfo() || len(x.GetResources()) != len(y.GetResources()) {
		return false
	}
	byName := map[string]proto.Message{}
	for _, m := range decodeAll(t, x.GetTypeUrl(), x.GetResources()) {
		byName[cache.GetResourceName(m)] = m
	}
	for _, m := range decodeAll(t, y.GetTypeUrl(), y.GetResources()) {
		if !proto.Equal(m, byName[cache.GetResourceName(m)]) {
			return false
		}
	}
	return true
}

// versionsOf maps the resources of a delta response to their versions.
func versionsOf(resp *discovery.DeltaDiscoveryResponse) map[string]string {
	out := map[string]string{}
	for _, r := range resp.GetResources() {
		out[r.GetName()] = r.GetVersion()
	}
	return out
}

// deltaFetch opens a delta ADS stream to h for every listener, declaring
// the listener versions in had, and returns the first response.
func deltaFetch(t *testing.T, h *harness, had map[string]string) *discovery.DeltaDiscoveryResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := &discovery.DeltaDiscoveryRequest{Node: node(gateway), TypeUrl: resource.ListenerType, InitialResourceVersions: had}
	if err := stream.Send(req); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("delta listeners: %v", err)
	}
	return resp
}
