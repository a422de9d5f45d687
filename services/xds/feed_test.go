package xds

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
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

	for _, tc := range badValues(t) {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = gatewayKey
			}
			if tc.suffix != "" {
				key += "." + tc.suffix
			}
			before := h.count(t, "gatewire_xds_snapshots_rejected_total", attribute.String("gateway", tc.gateway))
			h.put(t, key, tc.value)
			testkit.Eventually(t, wait, "the rejection counted", func() bool {
				return h.count(t, "gatewire_xds_snapshots_rejected_total", attribute.String("gateway", tc.gateway)) > before
			})
			testkit.Eventually(t, wait, "the rejection log line", func() bool {
				return len(h.logs.Lines(`"msg":"snapshot rejected`, `"key":"`+key+`"`, tc.logs)) > 0
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
	suffix  string // a resource key's suffix; the commit when empty
	gateway string // the gateway attribute of the rejection
	value   proto.Message
	logs    string // in the log line
}

// resourceKey is the suffix of r's key.
func resourceKey(t *testing.T, r *busv1.XdsResource) string {
	t.Helper()
	k, err := xdsbucket.KindOf(r)
	if err != nil {
		t.Fatal(err)
	}
	return xdsbucket.Suffix(k, r)
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
	noCluster := mustSnapshot(t, "v9",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, "missing"),
		xdstest.Cluster(xdstest.ClusterName),
		xdstest.LoadAssignment(xdstest.ClusterName, "127.0.0.1", 9090))
	noEndpoints := mustSnapshot(t, "v10",
		xdstest.Listener(xdstest.ListenerName, xdstest.ListenerPort, xdstest.RouteName),
		xdstest.RouteConfig(xdstest.RouteName, xdstest.ClusterName),
		xdstest.Cluster(xdstest.ClusterName))

	garbage := &busv1.XdsResource{TypeUrl: xdsbucket.ClusterType, Name: "garbage", Value: []byte{0xff, 0xff, 0xff}}
	garbage.Version = xdsbucket.Version(garbage.Value)
	misnamed := clusterResource(t, "other-name")
	misnamed.Name = "backend-2"
	misplaced := clusterResource(t, "misplaced")
	unknownType := &busv1.XdsResource{TypeUrl: "type.googleapis.com/example.Unknown", Name: "u"}
	forged := clusterResource(t, "forged")
	forgedSuffix := resourceKey(t, forged)
	forged.Version = "0000000000000000"
	inline := sample("v11")
	otherCluster := xdstest.Sample("ns/other", "v7")

	return append([]badValue{
		{name: "inconsistent", gateway: gateway, value: noRoutes, logs: "inconsistent"},
		{name: "route to a missing cluster", gateway: gateway, value: noCluster, logs: `cluster \"missing\"`},
		{name: "EDS cluster without endpoints", gateway: gateway, value: noEndpoints, logs: "has no ClusterLoadAssignment"},
		{name: "invalid resource", gateway: gateway, value: invalid, logs: "ConnectTimeout"},
		{name: "undecodable value", gateway: gateway, suffix: resourceKey(t, garbage), value: garbage, logs: "garbage"},
		{name: "value named otherwise", gateway: gateway, suffix: resourceKey(t, misnamed), value: misnamed, logs: "the value is named"},
		{name: "resource under another kind", gateway: gateway, suffix: "eds." + strings.TrimPrefix(resourceKey(t, misplaced), "cds."), value: misplaced, logs: "belongs under"},
		{name: "unknown type", gateway: gateway, suffix: "cds.dQ", value: unknownType, logs: "example.Unknown"},
		{name: "version not the hash", gateway: gateway, suffix: forgedSuffix, value: forged, logs: "not the hash"},
		{name: "no version", gateway: gateway, value: sample(""), logs: "version is empty"},
		{name: "node cluster of another key", gateway: gateway, value: otherCluster, logs: "does not match the key"},
		{name: "resources inline in the commit", gateway: gateway, value: &rawCommit{inline}, logs: "inline"},
		{name: "not a snapshot", gateway: gateway, value: &busv1.Proxy{Name: "gw"}, logs: "want an XdsSnapshot"},
		{name: "bad key", key: "ns.gw.extra", gateway: "unknown", value: sample("v8"), logs: "key"},
	}, badProxylessValues(t)...)
}

// rawCommit is an XdsSnapshot that put writes as it is, not in the
// bucket's layout.
type rawCommit struct{ *busv1.XdsSnapshot }

func clusterResource(t *testing.T, name string) *busv1.XdsResource {
	t.Helper()
	v, err := proto.Marshal(xdstest.Cluster(name))
	if err != nil {
		t.Fatal(err)
	}
	return &busv1.XdsResource{TypeUrl: xdsbucket.ClusterType, Name: name, Value: v, Version: xdsbucket.Version(v)}
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
	log := slog.New(slog.DiscardHandler)
	st := newStore()
	m, err := newMetrics(noop.NewMeterProvider().Meter(meterName), st)
	if err != nil {
		t.Fatal(err)
	}
	f := newFeed(b, st, log, m, tracenoop.NewTracerProvider().Tracer(tracerName), newDataPlane(b, log, "test", servedVersion(st)))
	ctx := context.Background()
	pub := xdstest.NewPublisher(b)
	for _, name := range []string{"kept", "deleted"} {
		if _, err := pub.Publish(ctx, xdstest.Sample("ns/"+name, "v1")); err != nil {
			t.Fatal(err)
		}
	}
	version := func(nodeCluster string) string {
		snap := st.snapshot(nodeCluster, false)
		if snap == nil {
			return ""
		}
		return snap.types[typeListener].version
	}
	followUntil(t, f, func() bool { return version("ns/kept") == "v1" && version("ns/deleted") == "v1" })
	if err := pub.Delete(ctx, bus.GatewayKey("ns", "deleted")); err != nil {
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
	testkit.Eventually(t, wait, "the feed", cond)
	cancel()
	w.Stop()
	<-done
}
