package xds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

func TestMain(m *testing.M) {
	if os.Getenv(grpcTargetEnv) != "" || os.Getenv(fanoutClientEnv) != "" {
		// The child process of a gRPC client test: gRPC's xDS client keeps
		// goroutines of its own after the channel closes.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// wait is how long a test waits for something that should happen.
const wait = 10 * time.Second

// harness is a running Service on a loopback port with a client
// connection to it, a metric reader and a log buffer.
type harness struct {
	bus     *bus.Bus
	svc     *Service
	replica string
	conn    *grpc.ClientConn
	reader  *sdkmetric.ManualReader
	logs    *testkit.LogBuffer
	// stop stops the service and waits for Run to return; it runs at the
	// end of the test too.
	stop func()
}

// start runs a Service over b, as replica "xds-0", until the test ends,
// and waits until it is ready.
func start(t *testing.T, b *bus.Bus) *harness {
	t.Helper()
	return startReplica(t, b, "xds-0")
}

// startReplica runs a Service over b as the given replica.
func startReplica(t *testing.T, b *bus.Bus, replica string) *harness {
	t.Helper()
	return startWith(t, b, replica, func(*Config) {})
}

// startWith runs a Service over b as the given replica, with the default
// configuration as edit changes it.
func startWith(t *testing.T, b *bus.Bus, replica string, edit func(*Config), opts ...Option) *harness {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	h := &harness{bus: b, replica: replica, reader: sdkmetric.NewManualReader(), logs: &testkit.LogBuffer{}}
	log := h.logs.JSONLogger(slog.LevelDebug)
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	cfg := DefaultConfig()
	cfg.ReplicaID = replica
	// Plaintext unless edit sets the TLS files: the tests of tls_test.go
	// attack the mTLS server, the others test what it serves.
	cfg.XDSInsecure = true
	edit(&cfg)
	h.svc, err = New(cfg, b, log, append([]Option{WithListener(l), WithMeterProvider(meters)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.svc.Run(ctx) }()
	h.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		_ = meters.Shutdown(context.Background())
	})
	t.Cleanup(h.stop)
	h.conn, err = grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc client: %v", err)
	}
	t.Cleanup(func() { _ = h.conn.Close() })
	testkit.Eventually(t, wait, "service ready", h.svc.Ready)
	if got := h.svc.Addr(); got == nil || got.String() != l.Addr().String() {
		t.Fatalf("Addr() = %v, want %v", got, l.Addr())
	}
	return h
}

// waitVersion waits until the store holds version of the listeners for
// nodeCluster.
func (h *harness) waitVersion(t *testing.T, nodeCluster, version string) {
	t.Helper()
	testkit.Eventually(t, wait, nodeCluster+" at version "+version, func() bool { return h.servedVersion(nodeCluster) == version })
}

// servedVersion is the listener version the store holds for nodeCluster,
// "" when it holds none.
func (h *harness) servedVersion(nodeCluster string) string {
	snap := h.svc.store.snapshot(nodeCluster, false)
	if snap == nil {
		return ""
	}
	return snap.types[typeListener].version
}

// waitAck waits until an open stream (delta or not) has acknowledged
// version of typeURL.
func (h *harness) waitAck(t *testing.T, delta bool, typeURL, version string) {
	t.Helper()
	testkit.Eventually(t, wait, fmt.Sprintf("an ACK of %s %s (delta %v)", typeURL, version, delta), func() bool {
		for _, st := range h.svc.Streams() {
			for _, ts := range st.Types {
				if st.Delta == delta && ts.TypeURL == typeURL && ts.Acked == version {
					return true
				}
			}
		}
		return false
	})
}

// statusEntry is the replica's data-plane status entry of the gateway
// ns/name; nil when there is none.
func (h *harness) statusEntry(t *testing.T, ns, name string) *busv1.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	e, err := h.bus.Get(ctx, bus.Status, bus.DataPlaneStatusKey(ns, name, h.replica))
	if errors.Is(err, bus.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("get status entry: %v", err)
	}
	st, ok := e.Value.(*busv1.Status)
	if !ok {
		t.Fatalf("status entry holds a %T", e.Value)
	}
	return st
}

// waitStatus waits until the gateway's entry holds a condition whose
// message contains every one of parts, and returns the entry.
func (h *harness) waitStatus(t *testing.T, parts ...string) *busv1.Status {
	t.Helper()
	var st *busv1.Status
	testkit.Eventually(t, wait, fmt.Sprintf("a status entry naming %q", parts), func() bool {
		st = h.statusEntry(t, "ns", "gw")
		return st != nil && len(st.GetConditions()) == 1 && containsAll(st.GetConditions()[0].GetMessage(), parts)
	})
	return st
}

// waitNoStatus waits until the gateway has no entry.
func (h *harness) waitNoStatus(t *testing.T) {
	t.Helper()
	testkit.Eventually(t, wait, "no status entry", func() bool { return h.statusEntry(t, "ns", "gw") == nil })
}

// put writes a value to the xds bucket: an inline snapshot in the
// bucket's layout (its resources, then its commit under key), anything
// else as it is.
func (h *harness) put(t *testing.T, key string, msg proto.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if raw, ok := msg.(*rawCommit); ok {
		msg = raw.XdsSnapshot
	} else if x, ok := msg.(*busv1.XdsSnapshot); ok {
		if _, err := publisherOf(h.bus).PublishAt(ctx, key, x); err != nil {
			t.Fatalf("publish %s: %v", key, err)
		}
		return
	}
	if _, err := h.bus.Put(ctx, bus.XDS, key, msg); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

var (
	publishersMu sync.Mutex
	publishers   = map[*bus.Bus]*xdstest.Publisher{}
)

// publisherOf is the one publisher of b, shared by the replicas of a test
// as the translator's writes are.
func publisherOf(b *bus.Bus) *xdstest.Publisher {
	publishersMu.Lock()
	defer publishersMu.Unlock()
	p := publishers[b]
	if p == nil {
		p = xdstest.NewPublisher(b)
		publishers[b] = p
	}
	return p
}

// attrs are the attributes of the ACK and NACK counters.
func attrs(gateway, typeURL string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("gateway", gateway), attribute.String("type_url", typeURL)}
}

// count is the value of a counter with the given attributes; 0 when absent.
func (h *harness) count(t *testing.T, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect metrics: %v", err)
	}
	want := attribute.NewSet(attrs...)
	var total int64
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != meterName {
			continue
		}
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != name || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Equals(&want) {
					total += dp.Value
				}
			}
		}
	}
	return total
}

// waitCount waits until a counter reaches n.
func (h *harness) waitCount(t *testing.T, n int64, name string, attrs ...attribute.KeyValue) {
	t.Helper()
	testkit.Eventually(t, wait, fmt.Sprintf("%s%v to reach %d", name, attrs, n), func() bool { return h.count(t, name, attrs...) == n })
}

// fetch opens a raw state-of-the-world ADS stream for nodeCluster, asks for
// every resource of typeURL and returns the first response.
func (h *harness) fetch(ctx context.Context, nodeCluster, typeURL string) (*discovery.DiscoveryResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(h.conn).StreamAggregatedResources(ctx)
	if err != nil {
		return nil, err
	}
	req := &discovery.DiscoveryRequest{Node: node(nodeCluster), TypeUrl: typeURL}
	if err := stream.Send(req); err != nil {
		return nil, err
	}
	return stream.Recv()
}

func node(nodeCluster string) *core.Node {
	return &core.Node{Id: "envoy-" + strings.ReplaceAll(nodeCluster, "/", "-"), Cluster: nodeCluster}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
