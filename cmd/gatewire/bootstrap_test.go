package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestBootstrap prints the bootstrap of a gateway in both modes and
// compares them with testdata/bootstrap; run go test -update to rewrite
// them, then review the diff. Each is read back as Envoy reads it.
func TestBootstrap(t *testing.T) {
	b := bustest.New(t)
	proxy := &busv1.Proxy{Namespace: "default", Name: "web", NodeCluster: "default/web",
		Ports: []*busv1.ProxyPort{{Name: "http", Protocol: "TCP", Port: 80, ContainerPort: 10080}}}
	if _, err := b.Put(context.Background(), bus.Infra, bus.GatewayKey("default", "web"), proxy); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		golden, nodeID, xds string
		args                []string
	}{
		{"host.yaml", "default/web/test-host", "10.0.0.5", []string{"-mode", "host", "-instance", "test-host", "-xds-address", "10.0.0.5:18000", "-bootstrap-dir", "/var/lib/gatewire/bootstrap"}},
		{"host-insecure.yaml", "default/web/test-host", "10.0.0.5", []string{"-mode", "host", "-instance", "test-host", "-xds-address", "10.0.0.5:18000", "-insecure"}},
		{"kubernetes.json", "default/web/pod", "gatewire-xds.gatewire-system.svc", []string{"-mode", "kubernetes", "-o", "json"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			out, err := runOnBus(b, runBootstrap, append(c.args, "default/web")...)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, "testdata/bootstrap/"+c.golden, []byte(out))
			data := []byte(out)
			if strings.HasSuffix(c.golden, ".yaml") {
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatal(err)
				}
			}
			var bs bootstrapv3.Bootstrap
			if err := protojson.Unmarshal(data, &bs); err != nil {
				t.Fatalf("not an Envoy bootstrap: %v", err)
			}
			if id := bs.GetNode().GetId(); id != c.nodeID {
				t.Errorf("node.id %q, want %q", id, c.nodeID)
			}
			if !strings.Contains(out, c.xds) {
				t.Errorf("the bootstrap does not point at %s:\n%s", c.xds, out)
			}
		})
	}
}

// TestBootstrapErrors checks what bootstrap says of a gateway the bus does
// not have and of bad flags.
func TestBootstrapErrors(t *testing.T) {
	b := bustest.New(t)
	if _, err := runOnBus(b, runBootstrap, "default/nope"); err == nil || !strings.Contains(err.Error(), "default/nope") {
		t.Errorf("an unknown gateway: %v, want an error naming it", err)
	}
	for _, args := range [][]string{{"-mode", "vm", "default/web"}, {"-xds-address", "nohost", "default/web"}, {"-o", "xml", "default/web"}, {"web"}} {
		_, err := runOnBus(b, runBootstrap, args...)
		if !errors.Is(err, errUsage) {
			t.Errorf("bootstrap %q: %v, want a usage error", args, err)
		}
	}
}
