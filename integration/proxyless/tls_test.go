package proxyless

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

// TestProxylessTLS: a client with a certificate of another CA gets no
// configuration at all; a client with its gateway's certificate keeps
// being served while the xds server's certificate and its own are
// rotated, and a client started after the rotation is served too.
func TestProxylessTLS(t *testing.T) {
	g := startGatewire(t)
	b := startBackend(t, "empty")
	g.apply(t, gatewayYAML)
	g.apply(t, service(namespace, "empty", b))
	g.apply(t, grpcRouteYAML)

	// Another CA's certificate, with a CA file that trusts the real
	// server: the server still refuses it.
	foreign := certstest.Gateway(t, certstest.CA(t, "another CA"), "grpc", "gw")
	if err := os.WriteFile(foreign.CA, g.ca.TrustBundle(), 0o644); err != nil {
		t.Fatal(err)
	}
	intruder := startClientWith(t, g.xdsAddr, nodeCluster, filepath.Dir(foreign.Cert))
	if r := intruder.call(t, callRequest{Target: target, Method: emptyCall, N: 1}); len(r.Backends) != 0 || r.Codes["Unavailable"] != 1 {
		t.Fatalf("a client with another CA's certificate: %s, want Unavailable and no backend", r)
	} else {
		t.Logf("a client with another CA's certificate: refused: %s", r.LastError)
	}

	dir := g.clientCertDir(t, nodeCluster)
	c := startClientWith(t, g.xdsAddr, nodeCluster, dir)
	c.until(t, "the first call", callRequest{Target: target, Method: emptyCall, N: 1}, func(r callResult) bool { return r.only("empty") })

	certstest.Write(t, filepath.Dir(g.serverFiles.Cert), certstest.Issue(t, g.ca, certs.XDSServerRequest(certstest.TrustDomain, nil, 0)))
	ns, name := namespace, "gw"
	certstest.Write(t, dir, certstest.Issue(t, g.ca, certs.GatewayRequest(certs.GatewayID{TrustDomain: certstest.TrustDomain, Namespace: ns, Name: name}, 0)))
	if r := c.call(t, callRequest{Target: target, Method: emptyCall, N: 20}); !r.only("empty") {
		t.Errorf("after the rotation, the connected client: %s", r)
	}
	fresh := startClient(t, g, nodeCluster)
	fresh.until(t, "a client started after the rotation", callRequest{Target: target, Method: emptyCall, N: 1}, func(r callResult) bool { return r.only("empty") })
}
