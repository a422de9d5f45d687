package xds

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// Fleet test sizes: streams (one of them stuck), streams per gRPC
// connection, routes of the gateway.
const (
	fleetPerConn   = 10
	fleetRoutes    = 300
	fleetDeadline  = 30 * time.Second // every healthy stream has each edit within it
	fleetStuckSend = 5 * time.Minute  // the send timeout: the stuck stream stays stuck meanwhile
)

// fleetStreams is the number of streams of the fleet test:
// GATEWIRE_XDS_FLEET_STREAMS, 500 by default.
var fleetStreams = func() int {
	if n, err := strconv.Atoi(os.Getenv("GATEWIRE_XDS_FLEET_STREAMS")); err == nil && n > 1 {
		return n
	}
	return 500
}()

// fleetSnapshot is the fleet's gateway with n routes, route edited at
// revision, with type versions.
func fleetSnapshot(version string, n, edited int, revision string) *busv1.XdsSnapshot {
	return xdstest.WithTypeVersions(xdstest.ManyRoutes(gateway, version, n, edited, revision))
}

// Flow-control windows of the clients: an Envoy-like one, and gRPC's
// smallest for a stuck client, which then blocks a send soon.
const (
	envoyWindow = 1 << 20
	stuckWindow = 64 << 10
)

// dialFleet opens n connections to addr with the given stream window
// (static: gRPC's estimate would widen it), closed when the test ends.
func dialFleet(t testing.TB, addr string, n int, window int32) []*grpc.ClientConn {
	t.Helper()
	conns := make([]*grpc.ClientConn, n)
	for i := range conns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(window), grpc.WithInitialConnWindowSize(16<<20))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		conns[i] = c
	}
	return conns
}

// stuckNames are the names a stuck client subscribes to: every endpoint
// and the route configuration of the fleet's gateway.
func stuckNames(n int) map[string][]string {
	var clusters []string
	for i := range n {
		clusters = append(clusters, fmt.Sprintf("bench/svc-%d-a/80", i), fmt.Sprintf("bench/svc-%d-b/80", i))
	}
	return map[string][]string{typeURLs[typeEndpoint]: clusters, typeURLs[typeRoute]: {xdstest.ManyRoutesListener}}
}

// TestFleet serves one gateway to 499 Envoy-like ADS streams and one
// stuck client that never reads, edits the gateway three times (a route,
// a route added, a route removed) and checks that every healthy stream
// ends on each edit's versions of every type within fleetDeadline while
// the stuck client's send is still blocked: no stream waits for it. The
// bound is fleetDeadline (30 s) for each edit to reach all 499 streams,
// under -race on a shared 2-core machine; the stuck stream's send timeout
// is 5 minutes, so a stream that waited for it could not make it.
func TestFleet(t *testing.T) {
	h := startWith(t, bustest.New(t), "xds-0", func(c *Config) { c.SendTimeout = fleetStuckSend })
	v1 := fleetSnapshot("v1", fleetRoutes, -1, "")
	h.put(t, gatewayKey, v1)
	h.waitVersion(t, gateway, versionOf(v1, typeListener))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	stuckConn := dialFleet(t, h.svc.Addr().String(), 1, stuckWindow)[0]
	stuckNode := &core.Node{Id: "stuck", Cluster: gateway}
	if _, err := startEnvoy(ctx, stuckConn, stuckNode, true, stuckNames(fleetRoutes)); err != nil {
		t.Fatal(err)
	}
	conns := dialFleet(t, h.svc.Addr().String(), fleetStreams/fleetPerConn, envoyWindow)
	clients := make([]*envoyClient, 0, fleetStreams-1)
	for i := range fleetStreams - 1 {
		c, err := startEnvoy(ctx, conns[i/fleetPerConn], &core.Node{Id: fmt.Sprintf("envoy-%d", i), Cluster: gateway}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	waitFleet(t, h, clients, v1)

	for _, edit := range []*busv1.XdsSnapshot{
		fleetSnapshot("v2", fleetRoutes, 3, "r1"),
		fleetSnapshot("v3", fleetRoutes+1, 3, "r1"),
		fleetSnapshot("v4", fleetRoutes, 7, "r2"),
	} {
		h.put(t, gatewayKey, edit)
		waitFleet(t, h, clients, edit)
	}
	checkStuck(t, h, "stuck")
	if n := h.count(t, "gatewire_xds_send_timeouts_total", attribute.String("gateway", gateway)); n != 0 {
		t.Errorf("%d send timeouts, want none yet", n)
	}
}

// versionOf is the version x gives type i.
func versionOf(x *busv1.XdsSnapshot, i int) string {
	for _, t := range x.GetResources() {
		if t.GetTypeUrl() == typeURLs[i] {
			return t.GetVersion()
		}
	}
	return ""
}

// waitFleet waits until every client holds x's version of each type it
// has, within fleetDeadline, and logs how long the last one took.
func waitFleet(t *testing.T, h *harness, clients []*envoyClient, x *busv1.XdsSnapshot) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), fleetDeadline)
	defer cancel()
	var last time.Time
	for _, c := range clients {
		for _, i := range []int{typeCluster, typeEndpoint, typeListener, typeRoute} {
			at, err := c.waitVersion(ctx, typeURLs[i], versionOf(x, i))
			if err != nil {
				dumpStream(t, h, c)
				t.Fatalf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
			}
			if at.After(last) {
				last = at
			}
		}
	}
	t.Logf("%s reached %d streams in %s", x.GetVersion(), len(clients), last.Sub(start).Round(time.Millisecond))
}

// checkStuck checks that the node's stream is still open and its send
// still blocked.
func checkStuck(t *testing.T, h *harness, nodeID string) {
	t.Helper()
	for _, st := range h.svc.store.all() {
		st.mu.Lock()
		id := st.node.id
		st.mu.Unlock()
		if id == nodeID {
			if st.sending.Load() == 0 {
				t.Errorf("the stuck client's stream is not blocked in a send")
			}
			return
		}
	}
	t.Errorf("the stuck client's stream is closed")
}

// TestSendTimeout checks that a client that stops reading has its stream
// closed after the send timeout, with a log line and a metric, and that a
// client that connects meanwhile is served.
func TestSendTimeout(t *testing.T) {
	h := startWith(t, bustest.New(t), "xds-0", func(c *Config) { c.SendTimeout = 500 * time.Millisecond })
	v1 := fleetSnapshot("v1", fleetRoutes, -1, "")
	h.put(t, gatewayKey, v1)
	h.waitVersion(t, gateway, versionOf(v1, typeListener))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn := dialFleet(t, h.svc.Addr().String(), 1, stuckWindow)[0]
	if _, err := startEnvoy(ctx, conn, &core.Node{Id: "stuck", Cluster: gateway}, true, stuckNames(fleetRoutes)); err != nil {
		t.Fatal(err)
	}
	h.waitCount(t, 1, "gatewire_xds_send_timeouts_total", attribute.String("gateway", gateway))
	h.waitCount(t, 1, "gatewire_xds_stream_closes_total", attribute.String("reason", closeSendTimeout))
	testkit.Eventually(t, wait, "the close logged", func() bool {
		return len(h.logs.Lines(`"msg":"xds stream closed"`, `"node":"stuck"`, `"reason":"send_timeout"`)) == 1
	})
	healthy, err := startEnvoy(ctx, dialFleet(t, h.svc.Addr().String(), 1, envoyWindow)[0], node(gateway), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFleet(t, h, []*envoyClient{healthy}, v1)
}

// dumpStream logs what the server and the client hold of c's stream.
func dumpStream(t *testing.T, h *harness, c *envoyClient) {
	t.Helper()
	all := h.svc.store.all()
	t.Logf("%d streams open", len(all))
	for _, st := range all {
		st.mu.Lock()
		if st.node.id == c.node.GetId() {
			for i := range numTypes {
				ts := &st.types[i]
				t.Logf("server %s: subscribed %v sent %q pending %q last %q held %q sending %d", typeURLs[i], ts.subscribed,
					ts.sentVersion, ts.pending, ts.last, ts.held, st.sending.Load())
			}
		}
		st.mu.Unlock()
	}
	c.mu.Lock()
	t.Logf("client: versions %v nonces %v", c.versions, c.nonce)
	c.mu.Unlock()
}
