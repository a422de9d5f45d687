package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestPublishedHeader checks that a publication time travels from a
// provider's write to the context of its reader and on to an output.
func TestPublishedHeader(t *testing.T) {
	b := bustest.New(t)
	ctx := context.Background()
	published := time.Unix(0, 1_700_000_000_123_456_789)
	if _, err := b.Put(ctx, bus.Resources, "Gateway.default.gw", &busv1.Resource{Kind: "Gateway"}, bus.WithPublished(published)); err != nil {
		t.Fatal(err)
	}
	e, err := b.Get(ctx, bus.Resources, "Gateway.default.gw")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := e.Published(); !ok || !got.Equal(published) {
		t.Fatalf("Published() = %v %v, want %v", got, ok, published)
	}
	changeCtx := e.Context(ctx)
	// An older change gathered later does not make the context older.
	changeCtx = bus.ContextWithPublished(changeCtx, published.Add(-time.Second))
	if _, err := b.Put(changeCtx, bus.XDS, "default.gw", &busv1.XdsSnapshot{Version: "v1"}, bus.WithPublishedFrom(changeCtx)); err != nil {
		t.Fatal(err)
	}
	out, err := b.Get(ctx, bus.XDS, "default.gw")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Header.Get(bus.HeaderPublished); got != "1700000000123456789" {
		t.Fatalf("output %s = %q, want the change's 1700000000123456789", bus.HeaderPublished, got)
	}
	// A context without a publication time adds no header.
	if _, err := b.Put(ctx, bus.XDS, "default.other", &busv1.XdsSnapshot{Version: "v1"}, bus.WithPublishedFrom(ctx)); err != nil {
		t.Fatal(err)
	}
	if out, _ := b.Get(ctx, bus.XDS, "default.other"); out.Header.Get(bus.HeaderPublished) != "" {
		t.Fatalf("a resync output carries %s %q", bus.HeaderPublished, out.Header.Get(bus.HeaderPublished))
	}
}

// collect reads the bus's metrics: the value of each series, by name and
// its attributes.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[series(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[series(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					out[series(m.Name, p.Attributes)] = p.Value
				}
			}
		}
	}
	return out
}

func series(name string, attrs attribute.Set) string {
	s := name + "{"
	for i, kv := range attrs.ToSlice() {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit())
	}
	return s + "}"
}

// TestMetrics writes to a bucket that a watch does not read and checks
// that the writes are counted and the watch is reported behind, then
// reads the watch and checks that it is reported caught up, and that a
// failed write is counted.
func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	b := bustest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := b.Watch(ctx, bus.Resources, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("first entry of an empty bucket = %v, want the end of the initial sync", e)
	}
	const n = 200 // more than the watch buffers
	for i := range n {
		if _, err := b.Put(ctx, bus.Resources, fmt.Sprintf("Service.default.r%d", i), resource("r", nil)); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(t, reader)
	if v := got["gatewire_bus_writes_total{bucket=resources,op=put}"]; v != n {
		t.Errorf("writes_total{resources,put} = %v, want %d", v, n)
	}
	// The watch's goroutine may still be taking entries from the server;
	// whatever it took sits in its buffer, unread.
	if v := got["gatewire_bus_watch_pending_entries{bucket=resources}"]; v < 1 {
		t.Errorf("pending entries = %v with %d entries unread, want at least 1", v, n)
	}
	if v := got["gatewire_bus_watch_lag_seconds{bucket=resources}"]; v <= 0 {
		t.Errorf("lag = %v with entries unread, want more than 0", v)
	}
	for i := range n {
		if e := <-w.Updates(); e == nil || e.Key != fmt.Sprintf("Service.default.r%d", i) {
			t.Fatalf("entry %d = %v", i, e)
		}
	}
	// Every entry is read; the server's count of the last one is 0 once
	// the watch received it, which it has, as its reader has it.
	got = collect(t, reader)
	if p, l := got["gatewire_bus_watch_pending_entries{bucket=resources}"], got["gatewire_bus_watch_lag_seconds{bucket=resources}"]; p != 0 || l != 0 {
		t.Errorf("after reading everything: pending %v, lag %v; want 0 and 0", p, l)
	}
	b.Conn().Close()
	if _, err := b.Put(ctx, bus.Resources, "Service.default.late", resource("late", nil)); err == nil {
		t.Fatal("a put over a closed connection succeeded")
	}
	if v := collect(t, reader)["gatewire_bus_write_errors_total{bucket=resources}"]; v != 1 {
		t.Errorf("write_errors_total{resources} = %v, want 1", v)
	}
}
