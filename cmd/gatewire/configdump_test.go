package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/pkg/xdsbucket/xdsbuckettest"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// publishTranslation translates the manifests of path and publishes the
// xDS snapshot of each gateway to the xds bucket in its layout, as the
// translator does.
func publishTranslation(t *testing.T, b *bus.Bus, path string) {
	t.Helper()
	objects, problems := readInputs([]string{path}, nil, nil, nil)
	if len(problems) > 0 {
		t.Fatal(problemsError(problems))
	}
	idx := resources.NewIndex()
	for _, o := range objects {
		if _, err := idx.Apply(manifest.Resource(o)); err != nil {
			t.Fatal(err)
		}
	}
	for _, out := range translateAll(context.Background(), idx, gatewayclass.DefaultControllerName).gateways {
		if out.XDS == nil {
			t.Fatalf("gateway %s has no xDS: %v", out.Gateway, out.XDSError)
		}
		xdsbuckettest.Publish(t, b, bus.GatewayKey(out.Gateway.Namespace, out.Gateway.Name), out.XDS)
	}
}

// runOnBus runs a command of the CLI against the installation of b.
func runOnBus(b *bus.Bus, run func(context.Context, []string, io.Writer) error, args ...string) (string, error) {
	var out bytes.Buffer
	args = append([]string{"-nats-url", b.Conn().ConnectedUrl(), "-system", b.System()}, args...)
	err := run(context.Background(), args, &out)
	return out.String(), err
}

// TestConfigDump prints what a gateway's Envoys are served, whole and
// filtered, and compares it with testdata/configdump/<case>; run go test
// -update to rewrite them, then review the diff.
func TestConfigDump(t *testing.T) {
	b := bustest.New(t)
	publishTranslation(t, b, "testdata/configdump/tls.in.yaml")
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"tls.json", nil},
		{"tls.routes.yaml", []string{"-o", "yaml", "-type", "routes,secrets"}},
		{"tls.cluster.json", []string{"-type", "clusters,endpoints", "-name", "default/web/*"}},
		{"tls.proxyless.json", []string{"-type", "listeners", "-proxyless"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			out, err := runOnBus(b, runConfigDump, append(c.args, "default/eg")...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out, "PRIVATE KEY") {
				t.Fatalf("the dump holds a private key:\n%s", out)
			}
			testkit.Golden(t, "testdata/configdump/"+c.golden, []byte(out))
		})
	}
}

// TestConfigDumpShape reads the dump back as Envoy's ConfigDump and checks
// its sections, in Envoy's order, and the redacted key.
func TestConfigDumpShape(t *testing.T) {
	b := bustest.New(t)
	publishTranslation(t, b, "testdata/configdump/tls.in.yaml")
	out, err := runOnBus(b, runConfigDump, "default/eg")
	if err != nil {
		t.Fatal(err)
	}
	var dump adminv3.ConfigDump
	if err := protojson.Unmarshal([]byte(out), &dump); err != nil {
		t.Fatalf("the dump is not an envoy.admin.v3.ConfigDump: %v", err)
	}
	var sections []string
	for _, c := range dump.GetConfigs() {
		sections = append(sections, strings.TrimPrefix(c.GetTypeUrl(), "type.googleapis.com/envoy.admin.v3."))
	}
	want := "ClustersConfigDump EndpointsConfigDump ListenersConfigDump RoutesConfigDump SecretsConfigDump"
	if got := strings.Join(sections, " "); got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
	var secrets adminv3.SecretsConfigDump
	if err := dump.GetConfigs()[4].UnmarshalTo(&secrets); err != nil {
		t.Fatal(err)
	}
	if n := len(secrets.GetDynamicActiveSecrets()); n != 1 || !strings.Contains(out, `"inline_string": "[redacted]"`) {
		t.Errorf("%d secrets, and the private key is not [redacted]:\n%s", n, out)
	}
}

// TestConfigDumpErrors checks what config-dump says of a gateway the bus
// does not have and of bad flags.
func TestConfigDumpErrors(t *testing.T) {
	b := bustest.New(t)
	_, err := runOnBus(b, runConfigDump, "default/nope")
	if err == nil || !strings.Contains(err.Error(), "default/nope") {
		t.Errorf("an unknown gateway: %v, want an error naming it", err)
	}
	for _, args := range [][]string{{"-type", "clusterz", "default/eg"}, {"-o", "xml", "default/eg"}, {"eg"}, {}} {
		if _, err := runOnBus(b, runConfigDump, args...); !errors.Is(err, errUsage) {
			t.Errorf("config-dump %q: %v, want a usage error", args, err)
		}
	}
}
