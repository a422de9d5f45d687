package proxyless

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/translator"
	"github.com/gatewire/gatewire/services/xds"
)

// wait is how long a test waits for something that should happen.
const wait = 20 * time.Second

// gatewire is the translator and the xds service running in this process
// over an embedded JetStream server.
type gatewire struct {
	bus     *bus.Bus
	xdsAddr string
	logs    *testkit.LogBuffer
	// ca issued the xds server's certificate (in serverFiles) and issues
	// the clients'.
	ca          *certs.CA
	serverFiles certs.Files
}

// startGatewire runs the translator and the xds service until the test
// ends, and waits until both are ready. Their logs are shown when the test
// fails.
func startGatewire(t *testing.T) *gatewire {
	t.Helper()
	g := &gatewire{bus: bustest.New(t), logs: &testkit.LogBuffer{}}
	log := g.logs.Logger(slog.LevelInfo)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gatewire logs:\n%s", g.logs.String())
		}
	})

	tcfg := translator.DefaultConfig()
	tcfg.Debounce = 5 * time.Millisecond
	tr, err := translator.New(tcfg, g.bus, log.With("service", "translator"))
	if err != nil {
		t.Fatalf("translator: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.xdsAddr = l.Addr().String()
	// The xds service serves mTLS with a certificate of a CA of the test.
	g.ca = certstest.CA(t, "proxyless test CA")
	g.serverFiles = certstest.XDSServer(t, g.ca)
	xcfg := xds.DefaultConfig()
	xcfg.CertFile, xcfg.KeyFile, xcfg.CAFile = g.serverFiles.Cert, g.serverFiles.Key, g.serverFiles.CA
	xs, err := xds.New(xcfg, g.bus, log.With("service", "xds"), xds.WithListener(l))
	if err != nil {
		t.Fatalf("xds: %v", err)
	}
	run(t, "translator", tr.Run)
	run(t, "xds", xs.Run)
	testkit.EventuallyValue(t, wait, "the translator and xds to be ready", func() (string, bool) {
		return fmt.Sprintf("translator %t, xds %t", tr.Ready(), xs.Ready()), tr.Ready() && xs.Ready()
	})
	return g
}

// clientCertDir issues the client certificate of gateway nodeCluster
// (<namespace>/<name>) into a new folder and returns it.
func (g *gatewire) clientCertDir(t *testing.T, nodeCluster string) string {
	t.Helper()
	ns, name, _ := strings.Cut(nodeCluster, "/")
	return filepath.Dir(certstest.Gateway(t, g.ca, ns, name).Cert)
}

// envoyCreds are the mTLS credentials of an Envoy of gateway nodeCluster.
func (g *gatewire) envoyCreds(t *testing.T, nodeCluster string) credentials.TransportCredentials {
	t.Helper()
	ns, name, _ := strings.Cut(nodeCluster, "/")
	cfg, err := certs.ClientConfig(certstest.Gateway(t, g.ca, ns, name), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return credentials.NewTLS(cfg)
}

// run runs a service until the test ends.
func run(t *testing.T, name string, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := fn(ctx); err != nil {
			t.Errorf("%s: Run: %v", name, err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// apply puts every object of the YAML documents into the resources
// bucket, as the provider would.
func (g *gatewire) apply(t *testing.T, yaml string) {
	t.Helper()
	rs, err := manifest.ReadResources(strings.NewReader(yaml), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		key := bus.ResourceKey(r.GetKind(), r.GetNamespace(), r.GetName())
		if _, err := g.bus.Put(context.Background(), bus.Resources, key, r); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
}

// remove deletes an object from the resources bucket.
func (g *gatewire) remove(t *testing.T, kind, namespace, name string) {
	t.Helper()
	if err := g.bus.Delete(context.Background(), bus.Resources, bus.ResourceKey(kind, namespace, name)); err != nil {
		t.Fatal(err)
	}
}

// service is a Service named like the backend with port servicePort, and
// an EndpointSlice that puts the backend's loopback port behind it.
func service(namespace, name string, b *backend) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  ports:
  - name: grpc
    port: %[3]d
    appProtocol: kubernetes.io/h2c
---
%[4]s`, namespace, name, servicePort, endpointSlice(namespace, name, b))
}

// endpointSlice is the EndpointSlice of Service name, with b's port.
func endpointSlice(namespace, name string, b *backend) string {
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[2]s-1
  namespace: %[1]s
  labels:
    kubernetes.io/service-name: %[2]s
addressType: IPv4
ports:
- name: grpc
  port: %[3]d
endpoints:
- addresses: [127.0.0.1]
  conditions: {ready: true}
`, namespace, name, b.port)
}

// servicePort is the port of every backend Service.
const servicePort = 50051
