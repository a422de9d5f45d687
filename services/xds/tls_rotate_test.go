package xds

import (
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestMTLSRotation renews the server's and a connected client's
// certificates, as infra does before they expire: the client's stream
// stays open and is sent the next version, new connections get the new
// server certificate, and a client that connects with its new certificate
// is served.
func TestMTLSRotation(t *testing.T) {
	b := bustest.New(t)
	ca := certstest.CA(t, "xds test CA")
	serverDir, clientDir := filepath.Join(t.TempDir(), "server"), filepath.Join(t.TempDir(), "client")
	server := certstest.Write(t, serverDir, certstest.Issue(t, ca, certs.XDSServerRequest(certstest.TrustDomain, nil, 0)))
	id := certs.GatewayID{TrustDomain: certstest.TrustDomain, Namespace: "ns", Name: "gw"}
	client := certstest.Write(t, clientDir, certstest.Issue(t, ca, certs.GatewayRequest(id, 0)))
	h := startWith(t, b, "xds-0", func(c *Config) {
		c.XDSInsecure = false
		c.CertFile, c.KeyFile, c.CAFile = server.Cert, server.Key, server.CA
	})
	h.put(t, "ns.gw", xdstest.Sample("ns/gw", "v1"))
	h.waitVersion(t, "ns/gw", "v1")
	before := serverSerial(t, h, client)

	conn := dial(t, h, clientCreds(t, client))
	s := openADS(t, conn, "ns/gw", resource.ListenerType, "")
	if v := s.recv(t).GetVersionInfo(); v != "v1" {
		t.Fatalf("first version %q, want v1", v)
	}
	s.ack(t)

	certstest.Write(t, serverDir, certstest.Issue(t, ca, certs.XDSServerRequest(certstest.TrustDomain, nil, 0)))
	certstest.Write(t, clientDir, certstest.Issue(t, ca, certs.GatewayRequest(id, 0)))
	var after string
	testkit.Eventually(t, wait, "the renewed server certificate on new connections", func() bool {
		after = serverSerial(t, h, client)
		return after != before
	})
	t.Logf("server certificate serial %s renewed to %s", before, after)

	h.put(t, "ns.gw", xdstest.Sample("ns/gw", "v2"))
	if v := s.recv(t).GetVersionInfo(); v != "v2" {
		t.Fatalf("after the rotation the open stream got %q, want v2", v)
	}
	s.ack(t)
	fresh := openADS(t, dial(t, h, clientCreds(t, client)), "ns/gw", resource.ListenerType, "")
	if v := fresh.recv(t).GetVersionInfo(); v != "v2" {
		t.Fatalf("a client with its renewed certificate got %q, want v2", v)
	}
	if n := len(h.svc.Streams()); n != 2 {
		t.Errorf("%d streams open, want the first and the new one", n)
	}
}

// serverSerial is the serial number of the certificate the server
// presents to a new connection of a client with files.
func serverSerial(t *testing.T, h *harness, files certs.Files) string {
	t.Helper()
	cfg, err := certs.ClientConfig(files, "127.0.0.1", certs.WithCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", h.svc.Addr().String(), cfg)
	if err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
