package translator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
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
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
)

// fleet returns the objects of a fleet of gateways fleet/gw-<g>, each
// with routes HTTPRoutes r-<g>-<i> sending /r<i> to Service s-<g>-<i>,
// which has one EndpointSlice of two endpoints. Gateways gw-0 and gw-1
// also route every path to the Service shared.
func fleet(tb testing.TB, gateways, routes int) []*busv1.Resource {
	tb.Helper()
	var y strings.Builder
	y.WriteString(gatewaytest.GatewayClass())
	y.WriteString(gatewaytest.Service("fleet", "shared"))
	for g := range gateways {
		gw := fleetGatewayName(g).Name
		y.WriteString(gatewaytest.Gateway("fleet", gw))
		for i := range routes {
			y.WriteString(fleetRoute(g, i, fmt.Sprintf("/r%d", i)).String())
			y.WriteString(gatewaytest.Service("fleet", fleetService(g, i)))
			y.WriteString(fleetSlice(g, i, 2))
		}
		if g < 2 {
			y.WriteString(gatewaytest.Route{Namespace: "fleet", Name: fmt.Sprintf("shared-%d", g), Gateway: gw,
				Hostname: "shared." + gw + ".example.com", Service: "shared"}.String())
		}
	}
	return decodeFleet(tb, y.String())
}

// fleetRoute is route i of gateway g sending prefix to its Service.
func fleetRoute(g, i int, prefix string) gatewaytest.Route {
	gw := fleetGatewayName(g).Name
	return gatewaytest.Route{Namespace: "fleet", Name: fmt.Sprintf("r-%d-%d", g, i), Gateway: gw,
		Hostname: fmt.Sprintf("h%d.%s.example.com", i, gw), Prefix: prefix, Service: fleetService(g, i)}
}

// fleetService is the name of the Service of route i of gateway g.
func fleetService(g, i int) string { return fmt.Sprintf("s-%d-%d", g, i) }

// fleetSlice is the EndpointSlice of route i of gateway g, whose second
// endpoint ends in last.
func fleetSlice(g, i, last int) string {
	return gatewaytest.EndpointSlice("fleet", fleetService(g, i),
		fmt.Sprintf("10.%d.%d.1", g%250, i), fmt.Sprintf("10.%d.%d.%d", g%250, i, last))
}

// fleetRouteResource is route i of gateway g sending prefix to its Service.
func fleetRouteResource(tb testing.TB, g, i int, prefix string) *busv1.Resource {
	tb.Helper()
	return decodeFleet(tb, fleetRoute(g, i, prefix).String())[0]
}

// fleetSliceResource is the EndpointSlice of route i of gateway g, whose
// second endpoint ends in last.
func fleetSliceResource(tb testing.TB, g, i, last int) *busv1.Resource {
	tb.Helper()
	return decodeFleet(tb, fleetSlice(g, i, last))[0]
}

func decodeFleet(tb testing.TB, y string) []*busv1.Resource {
	tb.Helper()
	rs, err := manifest.ReadResources(strings.NewReader(y), "fleet")
	if err != nil {
		tb.Fatal(err)
	}
	return rs
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
	return &replica{Service: s, nc: nc, spans: spans, stop: runService(tb, s)}
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
