package integration

import (
	"context"
	"crypto/tls"
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
)

// gatewayCreds issues, from the CA under a gatewire state folder (what
// infra and standalone create beside the bootstrap folder), the client
// certificate of gateway nodeCluster, and returns gRPC credentials that
// present it and verify the xds server at 127.0.0.1.
func gatewayCreds(t testing.TB, caDir, nodeCluster string) credentials.TransportCredentials {
	t.Helper()
	ctx := context.Background()
	var ca *certs.CA
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := (certs.FileStore{Files: certs.DirFiles(caDir)}).Load(ctx)
		if err == nil {
			if ca, err = certs.ParseCA(b); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CA in %s: %v", caDir, err)
		}
	}
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
	for name, creds := range map[string]credentials.TransportCredentials{
		"plaintext":                   insecure.NewCredentials(),
		"a certificate of another CA": foreignCreds(t),
	} {
		refusal, err := adsRefused(xdsAddr, creds)
		if err != nil {
			t.Errorf("xDS, %s: %v", name, err)
		}
		t.Logf("xDS, %s: refused: %s", name, refusal)
	}
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
