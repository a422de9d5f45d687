package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/testkit"
)

// checkBootstrap reads a bootstrap file as Envoy would and checks that it
// names the gateway and points at the xds service.
func checkBootstrap(t *testing.T, path, nodeCluster, xdsAddr string) {
	t.Helper()
	data := testkit.EventuallyValue(t, 10*time.Second, "the bootstrap "+path, func() ([]byte, bool) {
		data, err := os.ReadFile(path)
		return data, err == nil
	})
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("bootstrap %s: %v", path, err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		t.Fatalf("bootstrap %s: %v", path, err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("bootstrap %s: %v", path, err)
	}
	if b.GetNode().GetCluster() != nodeCluster {
		t.Fatalf("bootstrap node.cluster = %q, want %q", b.GetNode().GetCluster(), nodeCluster)
	}
	host, port, _ := strings.Cut(xdsAddr, ":")
	if !strings.Contains(string(js), host) || !strings.Contains(string(js), port) {
		t.Fatalf("bootstrap %s does not point at the xds service %s:\n%s", path, xdsAddr, data)
	}
}

// TestStandalone runs `gatewire standalone` on the quickstart example and
// checks that a gateway's Envoy gets its configuration.
func TestStandalone(t *testing.T) {
	tmp := t.TempDir()
	xdsAddr, natsAddr, admin := freeAddr(t), freeAddr(t), freeAddr(t)
	bootstraps := filepath.Join(tmp, "bootstrap")
	examples, err := filepath.Abs("../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, "gatewire", []string{
		"GATEWIRE_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_INFRA_XDS_ADDRESS=" + xdsAddr,
		"GATEWIRE_STANDALONE_NATS_LISTEN=" + natsAddr,
		"GATEWIRE_STANDALONE_STORE_DIR=" + filepath.Join(tmp, "nats"),
		"GATEWIRE_STANDALONE_AUTH_DIR=" + filepath.Join(tmp, "auth"),
		"GATEWIRE_INFRA_BOOTSTRAP_DIR=" + bootstraps,
		"GATEWIRE_ADMIN_ADDRESS=" + admin,
	}, "standalone", "-dir", examples)
	waitReady(t, p, admin, 30*time.Second)
	envoy := connectEnvoyWith(t, xdsAddr, "default/quickstart", gatewayCreds(t, filepath.Join(tmp, "ca"), "default/quickstart"))
	envoy.waitFor(t, 20*time.Second, "the quickstart route", func(s snapshot) bool {
		c := routeTo(s, "www.example.com", "/")
		return len(s.listeners) == 1 && c != "" && s.clusters[c] != nil && endpointCount(s, c) == 2
	})
	checkBootstrap(t, filepath.Join(bootstraps, "default-quickstart.yaml"), "default/quickstart", xdsAddr)
	checkStandaloneSecurity(t, p, tmp, natsAddr, xdsAddr)
	testkit.Eventually(t, 10*time.Second, "standalone to print the bootstrap path", func() bool {
		return strings.Contains(p.output(), "default-quickstart.yaml")
	})
}
