package xds

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestBadValuesKeepPrevious puts values the service must not serve into
// the xds bucket and checks that each is rejected with a log line naming
// its key and what is wrong, and that the previous snapshot stays served.
func TestBadValuesKeepPrevious(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, xdstest.Sample(gateway, "v1"))
	h.waitVersion(t, gateway, "v1")

	rejected := map[string]int64{} // by gateway attribute
	for _, tc := range badValues(t) {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = gatewayKey
			}
			h.put(t, key, tc.value)
			rejected[tc.gateway]++
			h.waitCount(t, rejected[tc.gateway], "gatewire_xds_snapshots_rejected_total", attribute.String("gateway", tc.gateway))
			waitFor(t, "the rejection log line", func() bool {
				return len(h.logs.lines(`"msg":"snapshot rejected`, `"key":"`+key+`"`, tc.logs)) == 1
			})
			resp, err := h.fetch(context.Background(), gateway, resource.ListenerType)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetVersionInfo() != "v1" || len(resp.GetResources()) != 1 {
				t.Fatalf("served %q with %d listeners, want v1 with 1", resp.GetVersionInfo(), len(resp.GetResources()))
			}
		})
	}
}

type badValue struct {
	name    string
	key     string // gatewayKey when empty
	gateway string // the gateway attribute of the rejection
	value   proto.Message
	logs    string // in the log line
}

func badValues(t *testing.T) []badValue {
	t.Helper()
	sample := func(version string) *busv1.XdsSnapshot { return xdstest.Sample(gateway, version) }
	noRoutes := mustSnapshot(t, "v2",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", 9090))
	badCluster := xdstest.Cluster(xdstest.ClusterName)
	badCluster.ConnectTimeout = durationpb.New(-time.Second)
	invalid := mustSnapshot(t, "v3",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		badCluster,
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", 9090))

	garbage := sample("v4")
	garbage.Resources[0].Resources[0] = &anypb.Any{TypeUrl: garbage.Resources[0].TypeUrl, Value: []byte{0xff, 0xff, 0xff}}
	mislabeled := sample("v5")
	mislabeled.Resources[0].Resources[0] = mislabeled.Resources[1].Resources[0]
	unknownType := sample("v6")
	unknownType.Resources = append(unknownType.Resources, &busv1.TypedResources{TypeUrl: "type.googleapis.com/example.Unknown"})
	noVersion := sample("")
	otherCluster := xdstest.Sample("ns/other", "v7")

	return append([]badValue{
		{name: "inconsistent", gateway: gateway, value: noRoutes, logs: "inconsistent"},
		{name: "invalid resource", gateway: gateway, value: invalid, logs: "ConnectTimeout"},
		{name: "undecodable any", gateway: gateway, value: garbage, logs: "resource 0"},
		{name: "any of another type", gateway: gateway, value: mislabeled, logs: "holds"},
		{name: "unknown type", gateway: gateway, value: unknownType, logs: "example.Unknown"},
		{name: "no version", gateway: gateway, value: noVersion, logs: "version is empty"},
		{name: "node cluster of another key", gateway: gateway, value: otherCluster, logs: "does not match the key"},
		{name: "not a snapshot", gateway: gateway, value: &busv1.Proxy{Name: "gw"}, logs: "want an XdsSnapshot"},
		{name: "bad key", key: "ns.gw.extra", gateway: "", value: sample("v8"), logs: "gateway key"},
	}, badProxylessValues(t)...)
}

func mustSnapshot(t *testing.T, version string, resources ...proto.Message) *busv1.XdsSnapshot {
	t.Helper()
	snap, err := xdstest.Snapshot(gateway, version, resources...)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestReopenedWatchEmptiesDeleted follows the bucket with one watch,
// deletes a gateway while no watch is open, and checks that the next watch
// empties that gateway after its initial sync and keeps the other.
func TestReopenedWatchEmptiesDeleted(t *testing.T) {
	b := bustest.New(t)
	f := &feed{
		bus:      b,
		cache:    newSplitCache(cacheLogger{slog.New(slog.DiscardHandler)}),
		log:      slog.New(slog.DiscardHandler),
		rejected: noop.Int64Counter{},
		served:   map[string]string{},
	}
	f.dataPlane = newDataPlane(b, f.log, "test", servedVersion(f.cache))
	ctx := context.Background()
	for _, name := range []string{"kept", "deleted"} {
		if _, err := xdsbucket.Write(ctx, b, bus.GatewayKey("ns", name), xdstest.Sample("ns/"+name, "v1")); err != nil {
			t.Fatal(err)
		}
	}
	version := func(nodeCluster string) string {
		snap, err := f.cache.GetSnapshot(nodeCluster)
		if err != nil {
			return ""
		}
		return snap.GetVersion(resource.ListenerType)
	}
	followUntil(t, f, func() bool { return version("ns/kept") == "v1" && version("ns/deleted") == "v1" })
	if err := xdsbucket.Remove(ctx, b, bus.GatewayKey("ns", "deleted")); err != nil {
		t.Fatal(err)
	}
	followUntil(t, f, func() bool { return version("ns/deleted") == deletedVersion })
	if version("ns/kept") != "v1" {
		t.Error("the gateway still in the bucket was emptied")
	}
}

// followUntil runs one watch of the feed until cond holds.
func followUntil(t *testing.T, f *feed, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := f.bus.Watch(ctx, bus.XDS, ">")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.follow(ctx, w)
	}()
	waitFor(t, "the feed", cond)
	cancel()
	w.Stop()
	<-done
}
