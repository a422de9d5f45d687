package integration

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// gatewayCreds issues, from the CA under a gatewire state folder (what
// infra and standalone create beside the bootstrap folder), the client
// certificate of gateway nodeCluster, and returns gRPC credentials that
// present it and verify the xds server at 127.0.0.1.
func gatewayCreds(t testing.TB, caDir, nodeCluster string) credentials.TransportCredentials {
	t.Helper()
	ctx := context.Background()
	ca := testkit.EventuallyValue(t, 20*time.Second, "the CA in "+caDir, func() (*certs.CA, bool) {
		b, err := (certs.FileStore{Files: certs.DirFiles(caDir)}).Load(ctx)
		if err != nil {
			return nil, false
		}
		ca, err := certs.ParseCA(b)
		return ca, err == nil
	})
	ns, name, _ := strings.Cut(nodeCluster, "/")
	id := certs.GatewayID{TrustDomain: certs.DefaultTrustDomain, Namespace: ns, Name: name}
	b, err := ca.Issue(certs.GatewayRequest(id, 0), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files := certs.DirFiles(filepath.Join(t.TempDir(), "client"))
	if err := (certs.FileStore{Files: files}).Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	cfg, err := certs.ClientConfig(files, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return credentials.NewTLS(cfg)
}

// checkStandaloneSecurity attacks a running gatewire standalone: its xDS
// port refuses plaintext clients and clients of another CA; its NATS
// server refuses clients without a user; gatewire status reads the bus as
// the read-only user standalone made, found with no flag; and no service
// of it was refused a permission while doing its job.
func checkStandaloneSecurity(t *testing.T, p *proc, state, natsAddr, xdsAddr string) {
	t.Helper()
	checkXDSAttacks(t, xdsAddr, filepath.Join(state, "ca"))
	if nc, err := nats.Connect("nats://"+natsAddr, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Error("the embedded NATS server let in a client without a user")
	}
	env := []string{"GATEWIRE_STANDALONE_AUTH_DIR=" + filepath.Join(state, "auth")}
	out, err := runGatewire(env, "status", "-nats-url", "nats://"+natsAddr)
	if err != nil || !strings.Contains(out, "gateway default/quickstart") {
		t.Errorf("gatewire status with standalone's reader: %v\n%s", err, out)
	}
	out, err = runGatewire([]string{"GATEWIRE_STANDALONE_AUTH_DIR=" + t.TempDir()}, "status", "-nats-url", "nats://"+natsAddr)
	if err == nil || !strings.Contains(out, "Authorization Violation") {
		t.Errorf("gatewire status without a user: %v\n%s", err, out)
	}
	if strings.Contains(p.output(), "Permissions Violation") {
		t.Errorf("a service of standalone was refused a permission:\n%s", p.output())
	}
}

// checkXDSAttacks attacks an xds service whose CA is under caDir, asking
// as default/quickstart: a plaintext client and a client of another CA
// are refused in the handshake, and a client whose certificate names
// default/other is refused with PermissionDenied naming both gateways.
func checkXDSAttacks(t *testing.T, xdsAddr, caDir string) {
	t.Helper()
	for _, a := range []struct {
		name  string
		creds credentials.TransportCredentials
		want  string
	}{
		{"plaintext", insecure.NewCredentials(), "Unavailable"},
		{"a certificate of another CA", foreignCreds(t), "Unavailable"},
		{"a certificate of default/other", gatewayCreds(t, caDir, "default/other"), "PermissionDenied"},
	} {
		refusal, err := adsRefused(xdsAddr, a.creds)
		if err != nil {
			t.Errorf("xDS, %s: %v", a.name, err)
		}
		if !strings.Contains(refusal, a.want) {
			t.Errorf("xDS, %s: refused with %q, want %s", a.name, refusal, a.want)
		}
		t.Logf("xDS attack, %s asking as default/quickstart: refused: %s", a.name, refusal)
	}
}

// foreignCreds present a gateway certificate of a CA of their own,
// whatever CAs the server asks for, and skip checking the server, as an
// attacker would.
func foreignCreds(t *testing.T) credentials.TransportCredentials {
	t.Helper()
	ca, err := certs.NewCA("another CA", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue(certs.GatewayRequest(certs.GatewayID{TrustDomain: certs.DefaultTrustDomain, Namespace: "default", Name: "quickstart"}, 0), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := b.KeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return credentials.NewTLS(&tls.Config{
		MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}, InsecureSkipVerify: true,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil },
	})
}

// adsRefused opens an ADS stream with creds and reports an error unless it
// is refused before any response; refusal is what the client got.
func adsRefused(addr string, creds credentials.TransportCredentials) (refusal string, err error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return err.Error(), nil
	}
	req := &discovery.DiscoveryRequest{Node: &core.Node{Id: "attacker", Cluster: "default/quickstart"}, TypeUrl: resource.ListenerType}
	if err := stream.Send(req); err != nil {
		return err.Error(), nil
	}
	resp, err := stream.Recv()
	if err == nil {
		return "", fmt.Errorf("served %d listeners", len(resp.GetResources()))
	}
	return err.Error(), nil
}

// runGatewire runs the gatewire CLI with env and returns its output.
func runGatewire(env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binaries, "gatewire"), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// xdsPKI is the CA of an installation of separate processes and the xds
// server's certificate: the CA under caDir, where infra
// (GATEWIRE_INFRA_CA_DIR) takes it to issue the gateways' certificates,
// and the xds server's certificate for the loopback addresses under
// serverDir, which the xds service serves (GATEWIRE_XDS_TLS_*) and infra
// renews (GATEWIRE_INFRA_XDS_TLS_DIR), as the certgen Job and infra do in
// Kubernetes.
type xdsPKI struct {
	caDir, serverDir string
}

func newXDSPKI(t testing.TB, dir string) *xdsPKI {
	t.Helper()
	p := &xdsPKI{caDir: filepath.Join(dir, "ca"), serverDir: filepath.Join(dir, "xds-tls")}
	ca, err := certs.NewCA("gatewire integration CA", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(certs.XDSServerRequest(certs.DefaultTrustDomain, []string{"localhost"}, 0), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := (certs.FileStore{Files: certs.DirFiles(p.caDir)}).Save(ctx, ca.Bundle()); err != nil {
		t.Fatal(err)
	}
	if err := (certs.FileStore{Files: certs.DirFiles(p.serverDir)}).Save(ctx, server); err != nil {
		t.Fatal(err)
	}
	return p
}

// xdsEnv is the environment of the xds service: mTLS with the server's
// certificate.
func (p *xdsPKI) xdsEnv() []string {
	f := certs.DirFiles(p.serverDir)
	return []string{"GATEWIRE_XDS_TLS_CERT=" + f.Cert, "GATEWIRE_XDS_TLS_KEY=" + f.Key, "GATEWIRE_XDS_TLS_CA=" + f.CA}
}

// infraEnv is the environment of infra: the CA, and where it renews the
// xds server's certificate.
func (p *xdsPKI) infraEnv() []string {
	return []string{"GATEWIRE_INFRA_CA_DIR=" + p.caDir, "GATEWIRE_INFRA_XDS_TLS_DIR=" + p.serverDir}
}

// creds are the mTLS credentials of an Envoy of nodeCluster.
func (p *xdsPKI) creds(t testing.TB, nodeCluster string) credentials.TransportCredentials {
	t.Helper()
	return gatewayCreds(t, p.caDir, nodeCluster)
}

// checkProxyStatus waits until `gatewire proxy-status -o json gateway`
// shows the streams of node (the test's Envoy opens one per type) with
// listeners, routes, clusters and endpoints SYNCED, and no stream of
// another node: the refused clients are not there.
func checkProxyStatus(t *testing.T, natsURL, system, gateway, node string) {
	t.Helper()
	var (
		streams int
		synced  map[string]bool
	)
	testkit.EventuallyValue(t, 30*time.Second, fmt.Sprintf("gatewire proxy-status %s: only %s, SYNCED for 4 types", gateway, node), func() (string, bool) {
		out, err := runGatewire(nil, "proxy-status", "-o", "json", "-nats-url", natsURL, "-system", system, gateway)
		var views []struct {
			NodeID string `json:"node_id"`
			Types  []struct{ Type, State string }
		}
		others := 0
		synced = map[string]bool{}
		body := out[max(strings.Index(out, "\n["), 0):] // after the CLI's log lines
		if err == nil && json.Unmarshal([]byte(body), &views) == nil {
			for _, v := range views {
				if v.NodeID != node {
					others++
				}
				for _, ty := range v.Types {
					if ty.State == "SYNCED" {
						synced[ty.Type] = true
					}
				}
			}
		}
		streams = len(views)
		return fmt.Sprintf("%v\n%s", err, out), others == 0 && len(synced) == 4
	})
	t.Logf("gatewire proxy-status %s: %d streams of %s, SYNCED for %v", gateway, streams, node, synced)
}
