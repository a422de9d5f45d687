package xdsgen

import (
	"errors"
	"strings"
	"testing"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

func gateway(routeBackend string) *irv1.Gateway {
	return &irv1.Gateway{
		Namespace: "default", Name: "eg",
		Listeners: []*irv1.Listener{{
			Name: "http-80", Port: 80, Protocol: irv1.Protocol_PROTOCOL_HTTP,
			VirtualHosts: []*irv1.VirtualHost{{Name: "*", Hostname: "*", Routes: []*irv1.Route{{
				Name:   "r",
				Match:  &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: "/"}},
				Action: &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: routeBackend, Weight: 1}}},
			}}}},
		}},
		Backends: []*irv1.Backend{{Name: "default/web/80", Namespace: "default", Service: "web", Port: 80,
			Endpoints: []*irv1.Endpoint{{Address: "10.0.0.1", Port: 8080, Ready: true}}}},
	}
}

func TestSnapshotIsDeterministic(t *testing.T) {
	a, err := Snapshot(gateway("default/web/80"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Snapshot(gateway("default/web/80"))
	if err != nil {
		t.Fatal(err)
	}
	if a.GetVersion() == "" || a.GetVersion() != b.GetVersion() {
		t.Errorf("versions %q and %q, want one non-empty version", a.GetVersion(), b.GetVersion())
	}
	if a.GetNodeCluster() != "default/eg" || len(a.GetResources()) != 4 {
		t.Errorf("node cluster %q with %d types, want default/eg with 4", a.GetNodeCluster(), len(a.GetResources()))
	}
}

func TestSnapshotRefusesARouteToNoCluster(t *testing.T) {
	_, err := Snapshot(gateway("default/missing/80"))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "default/missing/80") {
		t.Errorf("err = %v, want ErrInvalid naming default/missing/80", err)
	}
}

func TestBindPort(t *testing.T) {
	for port, want := range map[uint32]uint32{80: 10080, 443: 10443, 1023: 11023, 1024: 1024, 8080: 8080} {
		if got := BindPort(port); got != want {
			t.Errorf("BindPort(%d) = %d, want %d", port, got, want)
		}
	}
}
