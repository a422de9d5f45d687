package xdsgen

import (
	"errors"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protojson"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

func tlsGateway(secret string) *irv1.Gateway {
	return &irv1.Gateway{
		Namespace: "default", Name: "eg",
		Listeners: []*irv1.Listener{{
			Name: "https-443", Port: 443, Protocol: irv1.Protocol_PROTOCOL_HTTPS,
			Tls: []*irv1.TLSTermination{{Hostname: "www.example.com", Secrets: []string{secret}}},
			TlsRoutes: []*irv1.L4Route{{Name: "default/db", Hostnames: []string{"db.example.com", "*"},
				Backends: []*irv1.WeightedBackend{{Backend: "default/db/5432/tcp", Weight: 1}}}},
		}},
		Backends: []*irv1.Backend{{Name: "default/db/5432/tcp", Namespace: "default", Service: "db", Port: 5432,
			Protocol: irv1.BackendProtocol_BACKEND_PROTOCOL_TCP}},
		Secrets: []*irv1.Secret{{Name: "default/www", CertificateChain: []byte("chain"), PrivateKey: []byte("key")}},
	}
}

func TestTLSListenerChains(t *testing.T) {
	res, err := Resources(tlsGateway("default/www"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(res); err != nil {
		t.Fatal(err)
	}
	l := res[resourcev3.ListenerType][0].(*listenerv3.Listener)
	var names []string
	for _, c := range l.GetFilterChains() {
		names = append(names, c.GetName())
	}
	want := "passthrough/default/db/db.example.com passthrough/default/db/* terminate/www.example.com"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("filter chains %q, want %q", got, want)
	}
	if len(l.GetListenerFilters()) != 1 || len(res[resourcev3.SecretType]) != 1 || len(res[resourcev3.RouteType]) != 1 {
		t.Errorf("want a TLS inspector, the secret and the route configuration: %v", res)
	}
}

func TestSnapshotRefusesAMissingSecret(t *testing.T) {
	gw := tlsGateway("default/other")
	_, err := Snapshot(gw)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "default/other") {
		t.Errorf("err = %v, want ErrInvalid naming the secret default/other", err)
	}
}

func TestTCPListenerWithoutRoutesRefusesConnections(t *testing.T) {
	l, err := Listener(&irv1.Listener{Name: "tcp-9000", Port: 9000, Protocol: irv1.Protocol_PROTOCOL_TCP})
	if err != nil {
		t.Fatal(err)
	}
	proxy := &tcpproxyv3.TcpProxy{}
	if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(proxy); err != nil {
		t.Fatal(err)
	}
	if proxy.GetCluster() != InvalidBackendCluster {
		t.Errorf("cluster %q, want %q", proxy.GetCluster(), InvalidBackendCluster)
	}
}

func TestTypedConfigsAreValidated(t *testing.T) {
	// A TCP proxy needs a stat prefix: an unnamed listener has none.
	_, err := Listener(&irv1.Listener{Port: 9000, Protocol: irv1.Protocol_PROTOCOL_TCP})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "TcpProxy") {
		t.Errorf("err = %v, want ErrInvalid naming the TcpProxy", err)
	}
}

func TestUDPWeightedCluster(t *testing.T) {
	gw := &irv1.Gateway{
		Listeners: []*irv1.Listener{{Name: "udp-53", Port: 53, Protocol: irv1.Protocol_PROTOCOL_UDP,
			L4Routes: []*irv1.L4Route{{Name: "default/dns", Backends: []*irv1.WeightedBackend{
				{Backend: "a", Weight: 3}, {Backend: "b", Weight: 1}, {Weight: 1}}}}}},
		Backends: []*irv1.Backend{
			{Name: "a", Endpoints: []*irv1.Endpoint{{Address: "10.0.0.1", Port: 53, Ready: true}}},
			{Name: "b", Endpoints: []*irv1.Endpoint{{Address: "10.0.0.2", Port: 53, Ready: true}}},
		},
	}
	if c := UDPWeightedCluster(gw.Listeners[0]); c == nil || c.GetName() != "udp-53/weighted" {
		t.Fatalf("cluster %v, want udp-53/weighted", c)
	}
	clas := CombinedLoadAssignments(gw)
	if len(clas) != 1 || len(clas[0].GetEndpoints()) != 3 {
		t.Fatalf("combined load assignments %v, want three localities", clas)
	}
	for i, want := range []struct {
		zone   string
		weight uint32
	}{{"a", 3}, {"b", 1}, {dropLocality, 1}} {
		loc := clas[0].GetEndpoints()[i]
		if loc.GetLocality().GetSubZone() != want.zone || loc.GetLoadBalancingWeight().GetValue() != want.weight {
			t.Errorf("locality %d is %s weighted %d, want %s weighted %d", i,
				loc.GetLocality().GetSubZone(), loc.GetLoadBalancingWeight().GetValue(), want.zone, want.weight)
		}
	}
	if _, err := Snapshot(gw); err != nil {
		t.Error(err)
	}
}

// TestUDPUnresolvedShareIsDropped: one backend beside the share of a
// backendRef that cannot be resolved, and one without endpoints, still
// makes the weighted cluster, whose discarding locality takes both their
// shares, rather than the proxy sending everything to the one backend.
func TestUDPUnresolvedShareIsDropped(t *testing.T) {
	gw := &irv1.Gateway{
		Listeners: []*irv1.Listener{{Name: "udp-53", Port: 53, Protocol: irv1.Protocol_PROTOCOL_UDP,
			L4Routes: []*irv1.L4Route{{Name: "default/dns", Backends: []*irv1.WeightedBackend{
				{Backend: "a", Weight: 1}, {Weight: 2}, {Backend: "empty", Weight: 1}}}}}},
		Backends: []*irv1.Backend{
			{Name: "a", Endpoints: []*irv1.Endpoint{{Address: "10.0.0.1", Port: 53, Ready: true}}},
			{Name: "empty"},
		},
	}
	l, err := Listener(gw.Listeners[0])
	if err != nil {
		t.Fatal(err)
	}
	if js := protojson.Format(l); !strings.Contains(js, `"udp-53/weighted"`) {
		t.Errorf("the UDP proxy does not send to udp-53/weighted: %s", js)
	}
	clas := CombinedLoadAssignments(gw)
	if len(clas) != 1 || len(clas[0].GetEndpoints()) != 2 {
		t.Fatalf("combined load assignments %v, want two localities", clas)
	}
	drop := clas[0].GetEndpoints()[1]
	addr := drop.GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if drop.GetLoadBalancingWeight().GetValue() != 3 || addr.GetAddress() != dropAddress || addr.GetPortValue() != dropPort {
		t.Errorf("dropping locality %v, want weight 3 and endpoint %s:%d", drop, dropAddress, dropPort)
	}
	if _, err := Snapshot(gw); err != nil {
		t.Error(err)
	}
}
