package xds

import (
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// withTypeVersions is snap with a version for each of its types, by type
// URL, as the translator gives them.
func withTypeVersions(snap *busv1.XdsSnapshot, versions map[string]string) *busv1.XdsSnapshot {
	for _, typed := range snap.GetResources() {
		typed.Version = versions[typed.GetTypeUrl()]
	}
	return snap
}

// TestTypeVersions serves a snapshot whose types carry their versions,
// then one where only the route configuration changed: a client of each
// type was sent its type's version, and only the route configuration's
// client is sent the change. A second replica serves the same versions,
// and the secrets the snapshot does not hold are served empty.
func TestTypeVersions(t *testing.T) {
	b := bustest.New(t)
	a, other := startReplica(t, b, "xds-a"), startReplica(t, b, "xds-b")
	v1 := map[string]string{resource.ClusterType: "c1", resource.EndpointType: "e1",
		resource.ListenerType: "l1", resource.RouteType: "r1"}
	a.put(t, gatewayKey, withTypeVersions(xdstest.Sample(gateway, "v1"), v1))
	a.waitVersion(t, gateway, "l1")
	other.waitVersion(t, gateway, "l1")

	streams := map[string]*adsStream{}
	for _, typ := range served {
		s := openADS(t, a.conn, gateway, typ.typeURL, "", typ.names...)
		want := v1[typ.typeURL]
		if typ.typeURL == resource.SecretType {
			want = emptyVersion
		}
		if resp := s.recv(t); resp.GetVersionInfo() != want {
			t.Errorf("%s: version %q, want %q", typ.typeURL, resp.GetVersionInfo(), want)
		}
		s.ack(t)
		streams[typ.typeURL] = s
		fresh := openADS(t, other.conn, gateway, typ.typeURL, "", typ.names...)
		if resp := fresh.recv(t); resp.GetVersionInfo() != want {
			t.Errorf("%s: the other replica serves %q, want %q", typ.typeURL, resp.GetVersionInfo(), want)
		}
	}

	rc := xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName)
	rc.GetVirtualHosts()[0].Domains = []string{"shop.example"}
	v2, err := xdstest.Snapshot(gateway, "v2",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName), rc,
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort))
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{resource.ClusterType: "c1", resource.EndpointType: "e1",
		resource.ListenerType: "l1", resource.RouteType: "r2"}
	a.put(t, gatewayKey, withTypeVersions(v2, versions))
	resp := streams[resource.RouteType].recv(t)
	if resp.GetVersionInfo() != "r2" || len(resp.GetResources()) != 1 {
		t.Fatalf("routes: %q with %d resources, want r2 with 1", resp.GetVersionInfo(), len(resp.GetResources()))
	}
	got, err := resp.GetResources()[0].UnmarshalNew()
	if err != nil || !proto.Equal(got, rc) {
		t.Errorf("routes: served %v (%v), want %v", got, err, rc)
	}
	for typeURL, s := range streams {
		if typeURL != resource.RouteType {
			s.expectNone(t, quiet)
		}
	}
}
