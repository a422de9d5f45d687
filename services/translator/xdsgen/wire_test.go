package xdsgen

import (
	"bytes"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// marshal is proto's deterministic encoding of m, the bytes the wire
// encoders must give.
func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return b
}

// wireBackends are backends of every shape the wire encoders take or
// decline: names and addresses whose lengths need one, two and three
// bytes of varint, ports 0 and 65535, endpoints not ready or listed
// twice, HTTP/2, TLS trusted or refused, and what ValidateAll or
// marshalling rejects.
func wireBackends() map[string]*irv1.Backend {
	ep := func(addr string, port uint32, ready bool) *irv1.Endpoint {
		return &irv1.Endpoint{Address: addr, Port: port, Ready: ready}
	}
	long, longer := strings.Repeat("a", 200), strings.Repeat("b", 20000)
	return map[string]*irv1.Backend{
		"plain":         {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 8080, true), ep("10.0.0.2", 8080, true)}},
		"no endpoints":  {Name: "ns/svc/80"},
		"none ready":    {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 8080, false)}},
		"some ready":    {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 8080, false), ep("10.0.0.2", 1, true), ep("10.0.0.3", 65535, true)}},
		"port 0":        {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 0, true)}},
		"listed twice":  {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 80, true), ep("10.0.0.1", 80, true), ep("10.0.0.1", 81, true)}},
		"long names":    {Name: long, Endpoints: []*irv1.Endpoint{ep(long, 300, true), ep(longer, 70, true)}},
		"longer name":   {Name: longer, Endpoints: []*irv1.Endpoint{ep("fd00::1", 443, true)}},
		"unicode":       {Name: "ns/ŝvc/80", Endpoints: []*irv1.Endpoint{ep("hôte.example", 80, true)}},
		"http2":         {Name: "ns/svc/81", Protocol: irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2, Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 80, true)}},
		"tcp":           {Name: "ns/svc/81/tcp", Protocol: irv1.BackendProtocol_BACKEND_PROTOCOL_TCP, Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 80, true)}},
		"many":          {Name: "ns/svc/80", Endpoints: manyEndpoints(40)},
		"tls trusted":   {Name: "ns/svc/443", Tls: &irv1.BackendTLS{Sni: "svc", WellKnownCas: true}, Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 443, true)}},
		"tls refused":   {Name: "ns/svc/443", Tls: &irv1.BackendTLS{Sni: "svc"}, Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 443, true)}},
		"no name":       {Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 80, true)}},
		"bad name":      {Name: "ns/\xff/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 80, true)}},
		"no address":    {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("", 80, true)}},
		"bad address":   {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.\xfe", 80, true)}},
		"port too high": {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("10.0.0.1", 65536, true)}},
		"unready bad":   {Name: "ns/svc/80", Endpoints: []*irv1.Endpoint{ep("", 65536, false), ep("10.0.0.1", 80, true)}},
	}
}

func manyEndpoints(n int) []*irv1.Endpoint {
	out := make([]*irv1.Endpoint, n)
	for i := range out {
		out[i] = &irv1.Endpoint{Address: "10.1.0." + strings.Repeat("9", i%3+1), Port: uint32(1000 + i), Ready: i%5 != 0}
	}
	return out
}

// TestWireMatchesProto checks, for every shape of backend, that the wire
// encoders give proto's bytes when they take a backend, and that they
// decline exactly what the path through the messages rejects (and, for
// the cluster, backends with TLS to verify).
func TestWireMatchesProto(t *testing.T) {
	for name, be := range wireBackends() {
		t.Run(name, func(t *testing.T) {
			compareWire(t, be)
		})
	}
}

// compareWire compares the wire encoders' bytes with proto's for be, and
// what they decline with what the messages reject.
func compareWire(t testing.TB, be *irv1.Backend) {
	t.Helper()
	c, cerr := clusterMessage(be)
	cw, cok := clusterWire(be)
	if want := cerr == nil && !trusted(be.GetTls()); cok != want {
		t.Fatalf("clusterWire took %v: %v, want %v (the messages: %v)", be, cok, want, cerr)
	}
	if cok && !bytes.Equal(cw, marshal(t, c)) {
		t.Errorf("cluster of %v:\n got %x\nwant %x", be, cw, marshal(t, c))
	}
	cla := LoadAssignment(be)
	_, lerr := newPiece(resourcev3.EndpointType, cla, be.GetName(), nil)
	lw, lok := loadAssignmentWire(be)
	if lok != (lerr == nil) {
		t.Fatalf("loadAssignmentWire took %v: %v, but the messages: %v", be, lok, lerr)
	}
	if lok && !bytes.Equal(lw, marshal(t, cla)) {
		t.Errorf("load assignment of %v:\n got %x\nwant %x", be, lw, marshal(t, cla))
	}
}

// clusterMessage builds, checks and marshals a backend's cluster the way
// encodeCluster does without the wire encoders.
func clusterMessage(be *irv1.Backend) (*clusterv3.Cluster, error) {
	c, err := Cluster(be)
	if err != nil {
		return nil, err
	}
	if _, err := newPiece(resourcev3.ClusterType, c, c.GetName(), nil); err != nil {
		return nil, err
	}
	return c, nil
}

// TestAPIListenerWire checks the API listener's encoding against proto's
// for hostnames and route configuration names of every varint length.
func TestAPIListenerWire(t *testing.T) {
	long, longer := strings.Repeat("h", 200), strings.Repeat("g", 20000)
	for _, host := range []string{"a", "www.example.com", "hôte.example", long, longer} {
		for _, rc := range []string{"http-8080", long, longer} {
			tail, err := managerTail(host, rc)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := apiListenerWire(host, tail)
			if !ok {
				t.Fatalf("apiListenerWire(%.20q) declined", host)
			}
			lis, err := apiListener(host, rc, routerFilter)
			if err != nil {
				t.Fatal(err)
			}
			if want := marshal(t, lis); !bytes.Equal(got, want) {
				t.Errorf("host %.20q, route configuration %.20q:\n got %x\nwant %x", host, rc, got, want)
			}
		}
	}
	tail, err := managerTail("x", "rc")
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"", "\xff"} {
		if _, ok := apiListenerWire(host, tail); ok {
			t.Errorf("apiListenerWire(%q) took a host the messages reject", host)
		}
	}
}

// FuzzWire compares the wire encoders with proto's for arbitrary names,
// addresses and ports: when they take a backend or host, the messages
// must pass ValidateAll and marshal to the same bytes.
func FuzzWire(f *testing.F) {
	f.Add("ns/svc/80", "10.0.0.1", uint32(80), true, uint8(1), "www.example.com")
	f.Add("", "", uint32(70000), false, uint8(2), "")
	f.Add(strings.Repeat("n", 130), "fd00::1", uint32(0), true, uint8(3), "\xff")
	f.Fuzz(func(t *testing.T, name, address string, port uint32, ready bool, protocol uint8, host string) {
		be := &irv1.Backend{
			Name:     name,
			Protocol: irv1.BackendProtocol(protocol % 5),
			Endpoints: []*irv1.Endpoint{
				{Address: address, Port: port, Ready: ready},
				{Address: "10.0.0.9", Port: port % 65536, Ready: true},
			},
		}
		compareWire(t, be)
		if tail, err := managerTail("x", name); err == nil {
			if got, ok := apiListenerWire(host, tail); ok {
				lis, err := apiListener(host, name, routerFilter)
				if err != nil || lis.ValidateAll() != nil {
					t.Fatalf("apiListenerWire took host %q, which the messages reject", host)
				}
				if !bytes.Equal(got, marshal(t, lis)) {
					t.Fatalf("API listener of %q, %q differs", host, name)
				}
			}
		}
	})
}
