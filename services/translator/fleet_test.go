package translator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// A fleet is gateways fleet/gw-<g>, each with HTTPRoutes r-<g>-<i> sending
// /r<i> to Service s-<g>-<i>, which has one EndpointSlice of two
// endpoints. Gateways gw-0 and gw-1 also route /shared to the Service
// shared.
const (
	fleetClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gatewire}
spec: {controllerName: gatewire.dev/gatewayclass-controller}
---
apiVersion: v1
kind: Service
metadata: {name: shared, namespace: fleet}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
`
	fleetGateway = `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw-%[1]d, namespace: fleet}
spec:
  gatewayClassName: gatewire
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	fleetRoute = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r-%[1]d-%[2]d, namespace: fleet}
spec:
  parentRefs: [{name: gw-%[1]d}]
  hostnames: [h%[2]d.gw-%[1]d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: %[3]s}}]
    backendRefs: [{name: s-%[1]d-%[2]d, port: 80}]
`
	fleetService = `---
apiVersion: v1
kind: Service
metadata: {name: s-%[1]d-%[2]d, namespace: fleet}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: s-%[1]d-%[2]d-1
  namespace: fleet
  labels: {kubernetes.io/service-name: s-%[1]d-%[2]d}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
- addresses: [10.%[3]d.%[2]d.1]
- addresses: [10.%[3]d.%[2]d.%[4]d]
`
	fleetShared = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared-%[1]d, namespace: fleet}
spec:
  parentRefs: [{name: gw-%[1]d}]
  hostnames: [shared.gw-%[1]d.example.com]
  rules:
  - backendRefs: [{name: shared, port: 80}]
`
)

// fleet returns the objects of a fleet of gateways with routes each.
func fleet(tb testing.TB, gateways, routes int) []*busv1.Resource {
	tb.Helper()
	var y strings.Builder
	y.WriteString(fleetClass)
	for g := range gateways {
		fmt.Fprintf(&y, fleetGateway, g)
		for i := range routes {
			fmt.Fprintf(&y, fleetRoute, g, i, fmt.Sprintf("/r%d", i))
			fmt.Fprintf(&y, fleetService, g, i, g%250, 2)
		}
		if g < 2 {
			fmt.Fprintf(&y, fleetShared, g)
		}
	}
	rs, err := resources.DecodeYAML(strings.NewReader(y.String()), "fleet")
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

// fleetRouteResource is route i of gateway g sending prefix to its Service.
func fleetRouteResource(tb testing.TB, g, i int, prefix string) *busv1.Resource {
	tb.Helper()
	rs, err := resources.DecodeYAML(strings.NewReader(fmt.Sprintf(fleetRoute, g, i, prefix)), "fleet")
	if err != nil {
		tb.Fatal(err)
	}
	return rs[0]
}

// fleetSliceResource is the EndpointSlice of route i of gateway g, whose
// second endpoint ends in last.
func fleetSliceResource(tb testing.TB, g, i, last int) *busv1.Resource {
	tb.Helper()
	rs, err := resources.DecodeYAML(strings.NewReader(fmt.Sprintf(fleetService, g, i, g%250, last)), "fleet")
	if err != nil {
		tb.Fatal(err)
	}
	return rs[1]
}

func fleetGatewayName(g int) types.NamespacedName {
	return types.NamespacedName{Namespace: "fleet", Name: fmt.Sprintf("gw-%d", g)}
}

func putAll(tb testing.TB, b *bus.Bus, rs ...*busv1.Resource) {
	tb.Helper()
	for _, r := range rs {
		if _, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey(r.Kind, r.Namespace, r.Name), r); err != nil {
			tb.Fatal(err)
		}
	}
}

// natsCluster is one NATS server and a system name: each replica gets its
// own connection, which a test can cut as a crash would.
type natsCluster struct {
	srv    *server.Server
	system string
	shared *bus.Bus
}

func newCluster(tb testing.TB) *natsCluster {
	tb.Helper()
	srv := bustest.Server(tb)
	b := bustest.Open(tb, bustest.Connect(tb, srv))
	return &natsCluster{srv: srv, system: b.System(), shared: b}
}

// connect opens a bus over a new connection of its own.
func (c *natsCluster) connect(tb testing.TB) (*bus.Bus, *nats.Conn) {
	tb.Helper()
	nc, err := nats.Connect(c.srv.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	b, err := bus.New(context.Background(), nc, bus.WithSystem(c.system))
	if err != nil {
		tb.Fatal(err)
	}
	return b, nc
}

// replica is a translator service running on its own connection.
type replica struct {
	*Service
	nc    *nats.Conn
	spans *tracetest.SpanRecorder
	stop  func()
}

// fastConfig notices dead replicas within half a second.
func fastConfig(id string) Config {
	cfg := DefaultConfig()
	cfg.Debounce = 5 * time.Millisecond
	cfg.Heartbeat = 100 * time.Millisecond
	cfg.MemberTTL = 500 * time.Millisecond
	cfg.ReplicaID = id
	return cfg
}

func (c *natsCluster) start(tb testing.TB, cfg Config) *replica {
	tb.Helper()
	b, nc := c.connect(tb)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	s, err := New(cfg, b, slog.New(slog.NewTextHandler(io.Discard, nil)), WithTracerProvider(tp))
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("Run returned %v", err)
			}
		})
	}
	tb.Cleanup(stop)
	return &replica{Service: s, nc: nc, spans: spans, stop: stop}
}

// crash cuts the replica off as if its process died: no more heartbeats,
// no goodbye.
func (r *replica) crash() {
	r.nc.Close()
	r.stop()
}

// translated returns the gateways the replica translated in spans that
// started after since, and how.
func (r *replica) translated(since time.Time) map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for _, sp := range r.spans.Ended() {
		if sp.Name() != "translate gateway" || sp.StartTime().Before(since) {
			continue
		}
		var gw, work string
		for _, a := range sp.Attributes() {
			switch a.Key {
			case "gatewire.gateway":
				gw = a.Value.AsString()
			case "gatewire.work":
				work = a.Value.AsString()
			}
		}
		ns, name, _ := strings.Cut(gw, "/")
		out[types.NamespacedName{Namespace: ns, Name: name}] = work
	}
	return out
}
