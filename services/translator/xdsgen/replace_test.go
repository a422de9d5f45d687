package xdsgen

import (
	"errors"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// replaceGateway has two backends, and an exact hostname when proxyless is
// set (which gives the snapshot proxyless listeners).
func replaceGateway(proxyless bool, webAddress string) *irv1.Gateway {
	host := "*"
	if proxyless {
		host = "shop.example.com"
	}
	backend := func(name, address string) *irv1.Backend {
		return &irv1.Backend{Name: "default/" + name + "/80", Namespace: "default", Service: name, Port: 80,
			Endpoints: []*irv1.Endpoint{{Address: address, Port: 8080, Ready: true}}}
	}
	return &irv1.Gateway{
		Namespace: "default", Name: "eg",
		Listeners: []*irv1.Listener{{
			Name: "http-80", Port: 80, Protocol: irv1.Protocol_PROTOCOL_HTTP,
			VirtualHosts: []*irv1.VirtualHost{{Name: host, Hostname: host, Routes: []*irv1.Route{{
				Name:   "r",
				Match:  &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: "/"}},
				Action: &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "default/web/80", Weight: 1}, {Backend: "default/api/80", Weight: 1}}},
			}}}},
		}},
		Backends: []*irv1.Backend{backend("api", "10.0.0.9"), backend("web", webAddress)},
	}
}

// Replacing the load assignments of a snapshot gives what Snapshot gives
// for the new endpoints, version included.
func TestReplaceLoadAssignmentsEqualsSnapshot(t *testing.T) {
	for _, proxyless := range []bool{false, true} {
		snap, err := Snapshot(replaceGateway(proxyless, "10.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		if proxyless && len(snap.GetProxylessListeners()) == 0 {
			t.Fatal("the proxyless case has no proxyless listeners")
		}
		next := replaceGateway(proxyless, "10.0.0.2")
		want, err := Snapshot(next)
		if err != nil {
			t.Fatal(err)
		}
		if err := ReplaceLoadAssignments(snap, []*endpointv3.ClusterLoadAssignment{LoadAssignment(next.Backends[1])}); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(snap, want) {
			t.Errorf("proxyless=%v: replaced snapshot (version %s) differs from a new one (version %s)", proxyless, snap.GetVersion(), want.GetVersion())
		}
	}
}

func TestReplaceLoadAssignmentsRefusesUnknownClusters(t *testing.T) {
	snap, err := Snapshot(replaceGateway(false, "10.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	before := proto.Clone(snap)
	err = ReplaceLoadAssignments(snap, []*endpointv3.ClusterLoadAssignment{{ClusterName: "default/nope/80"}})
	if !errors.Is(err, ErrInvalid) || !proto.Equal(snap, before) {
		t.Errorf("err = %v (snapshot changed: %v), want ErrInvalid and no change", err, !proto.Equal(snap, before))
	}
}
