package xds

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	secretservice "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// pki is the CA of a test and the xds server's certificate files.
type pki struct {
	ca     *certs.CA
	server certs.Files
}

// startTLS runs a Service over b that serves mTLS with a server
// certificate of a new CA, as replica "xds-0".
func startTLS(t *testing.T, b *bus.Bus) (*harness, *pki) {
	t.Helper()
	p := &pki{ca: certstest.CA(t, "xds test CA")}
	p.server = certstest.XDSServer(t, p.ca)
	h := startWith(t, b, "xds-0", func(c *Config) {
		c.XDSInsecure = false
		c.CertFile, c.KeyFile, c.CAFile = p.server.Cert, p.server.Key, p.server.CA
	})
	return h, p
}

// dial connects to the harness's server with creds.
func dial(t *testing.T, h *harness, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(h.svc.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// clientCreds are the mTLS credentials of a client with files.
func clientCreds(t *testing.T, files certs.Files) credentials.TransportCredentials {
	t.Helper()
	cfg, err := certs.ClientConfig(files, "127.0.0.1", certs.WithCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	return credentials.NewTLS(cfg)
}

// secret is a TLS certificate secret whose private key is key.
func secret(name, key string) *tlsv3.Secret {
	inline := func(s string) *core.DataSource {
		return &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: s}}
	}
	return &tlsv3.Secret{Name: name, Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
		CertificateChain: inline("cert of " + name), PrivateKey: inline(key),
	}}}
}

// withSecret is the sample snapshot of nodeCluster with one secret.
func withSecret(t *testing.T, nodeCluster, version, name, key string) *busv1.XdsSnapshot {
	t.Helper()
	x, err := xdstest.Snapshot(nodeCluster, version,
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", xdstest.BackendPort),
		secret(name, key))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// answers opens an ADS stream on conn, sends reqs and reads responses
// until the stream ends, which it must within wait: it returns those it
// read and the error that ended it.
func answers(conn *grpc.ClientConn, reqs ...*discovery.DiscoveryRequest) ([]*discovery.DiscoveryResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	for _, req := range reqs {
		if err := stream.Send(req); err != nil {
			break // the error is Recv's
		}
	}
	var out []*discovery.DiscoveryResponse
	for {
		resp, err := stream.Recv()
		if err != nil {
			return out, err
		}
		out = append(out, resp)
	}
}

const keyOfB = "-----BEGIN PRIVATE KEY----- of ns/b"

// TestMTLSAttacks attacks the mTLS server: clients without a certificate
// of its CA are refused in the handshake; a client whose certificate names
// gateway ns/a is refused, with PermissionDenied naming both gateways,
// when it asks as ns/b, whatever it sends first (a request, a NACK, an
// SDS request for ns/b's secret) or later; and a client of ns/a that names
// ns/b's secret is not sent it. None of them is served anything, counted,
// listed by Streams or written to the status bucket.
func TestMTLSAttacks(t *testing.T) {
	h, p := startTLS(t, bustest.New(t))
	h.put(t, "ns.a", withSecret(t, "ns/a", "v1", "a-key", "key of ns/a"))
	h.put(t, "ns.b", withSecret(t, "ns/b", "v1", keyName("b"), keyOfB))
	h.waitVersion(t, "ns/a", "v1")
	h.waitVersion(t, "ns/b", "v1")
	other := certstest.CA(t, "another CA")
	aFiles := certstest.Gateway(t, p.ca, "ns", "a")
	asA := dial(t, h, clientCreds(t, aFiles))
	caOnly := certs.Files{CA: p.server.CA}
	foreign := certstest.Gateway(t, other, "ns", "b")
	foreignCreds := credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}, InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			pair, err := tls.LoadX509KeyPair(foreign.Cert, foreign.Key)
			return &pair, err
		}})
	nodeB := &core.Node{Id: "attacker", Cluster: "ns/b"}
	nack := &discovery.DiscoveryRequest{Node: nodeB, TypeUrl: resource.ListenerType, VersionInfo: "v0", ResponseNonce: "1",
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: strings.Repeat("attacker's message ", 200)}}
	attacks := []struct {
		name string
		conn *grpc.ClientConn
		reqs []*discovery.DiscoveryRequest
		code codes.Code
		says []string
	}{
		{"plaintext client", dial(t, h, insecure.NewCredentials()), lds(nodeB), codes.Unavailable, nil},
		{"client without a certificate", dial(t, h, clientCreds(t, caOnly)), lds(nodeB), codes.Unavailable, nil},
		{"certificate of another CA naming ns/b", dial(t, h, foreignCreds), lds(nodeB), codes.Unavailable, nil},
		{"certificate of ns/a asking as ns/b", asA, lds(nodeB), codes.PermissionDenied, []string{`"ns/b"`, "ns/a", "spiffe://gatewire.local/ns/ns/gateway/a"}},
		{"certificate of ns/a NACKing as ns/b", asA, []*discovery.DiscoveryRequest{nack}, codes.PermissionDenied, []string{`"ns/b"`, "ns/a"}},
		{"certificate of ns/a asking as ns/a, then as ns/b", asA,
			append(lds(&core.Node{Id: "a", Cluster: "ns/a"}), &discovery.DiscoveryRequest{Node: nodeB, TypeUrl: resource.SecretType, ResourceNames: []string{keyName("b")}}),
			codes.PermissionDenied, []string{`"ns/b"`, "ns/a"}},
	}
	for _, a := range attacks {
		served, err := answers(a.conn, a.reqs...)
		t.Logf("attack %q: %v", a.name, err)
		if got := status.Code(err); got != a.code || !containsAll(status.Convert(err).Message(), a.says) {
			t.Errorf("%s: %v; want %s naming %q", a.name, err, a.code, a.says)
		}
		own := 0 // the responses to the requests as ns/a
		for _, r := range a.reqs {
			if r.GetNode().GetCluster() == "ns/a" {
				own++
			}
		}
		if len(served) != own {
			t.Errorf("%s: served %d responses, want %d", a.name, len(served), own)
		}
		for _, resp := range served {
			if strings.Contains(string(mustMarshal(t, resp)), keyOfB) {
				t.Errorf("%s: served ns/b's key", a.name)
			}
		}
	}
	checkSDSAttack(t, asA)
	checkNothingOf(t, h, "ns/b")
}

func keyName(gw string) string { return gw + "-key" }

func lds(n *core.Node) []*discovery.DiscoveryRequest {
	return []*discovery.DiscoveryRequest{{Node: n, TypeUrl: resource.ListenerType}}
}

// checkSDSAttack: a client of ns/a on the SDS service asks as ns/b for
// ns/b's secret and is refused; as ns/a, naming ns/b's secret, it is sent
// no secret; naming its own, it is sent its own.
func checkSDSAttack(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ask := func(cluster string, names ...string) (*discovery.DiscoveryResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		s, err := secretservice.NewSecretDiscoveryServiceClient(conn).StreamSecrets(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.Send(&discovery.DiscoveryRequest{Node: &core.Node{Id: "sds", Cluster: cluster}, ResourceNames: names}); err != nil {
			return nil, err
		}
		return s.Recv()
	}
	_, err := ask("ns/b", keyName("b"))
	t.Logf("attack %q: %v", "SDS, certificate of ns/a asking as ns/b for its secret", err)
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("SDS as ns/b: %v, want PermissionDenied", err)
	}
	resp, err := ask("ns/a", keyName("b"), "../b/"+keyName("b"), "*/"+keyName("b"))
	if err != nil {
		t.Fatalf("SDS as ns/a: %v", err)
	}
	t.Logf("attack %q: %d secrets", "SDS, certificate of ns/a naming ns/b's secret", len(resp.GetResources()))
	if len(resp.GetResources()) != 0 || strings.Contains(string(mustMarshal(t, resp)), keyOfB) {
		t.Errorf("SDS as ns/a naming ns/b's secret: sent %d secrets", len(resp.GetResources()))
	}
	resp, err = ask("ns/a", keyName("a"))
	if err != nil || len(resp.GetResources()) != 1 {
		t.Errorf("SDS as ns/a naming its own secret: %v, %d secrets; want 1", err, len(resp.GetResources()))
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkNothingOf checks that no client of gateway was counted, listed or
// written to the status or proxies buckets.
func checkNothingOf(t *testing.T, h *harness, gateway string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // what a refusal could have written
	for _, st := range h.svc.Streams() {
		if st.Gateway == gateway {
			t.Errorf("a stream of %s is open: %+v", gateway, st)
		}
	}
	ns, name, _ := strings.Cut(gateway, "/")
	if st := h.statusEntry(t, ns, name); st != nil {
		t.Errorf("status entry of %s written: %v", gateway, st)
	}
	for _, metric := range []string{"gatewire_xds_nacks_total", "gatewire_xds_acks_total", "gatewire_xds_responses_total"} {
		for _, url := range typeURLs {
			if n := h.count(t, metric, attrs(gateway, url)...); n != 0 {
				t.Errorf("%s{gateway=%s,type_url=%s} = %d, want 0", metric, gateway, url, n)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	keys, err := h.bus.Keys(ctx, bus.Proxies, bus.GatewayKey(ns, name)+".>")
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("proxies entries of %s: %v", gateway, keys)
	}
	if lines := h.logs.Lines("xds client refused"); len(lines) == 0 {
		t.Error("no refusal logged")
	}
}
