package translator

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/manifest"
)

// TestMetricsAndPublishedTime changes a route with a publication time and
// checks that the xds output carries it, and that the translation and the
// outputs were measured, labelled by gateway and bucket.
func TestMetricsAndPublishedTime(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	b := bustest.New(t)
	putYAML(t, b, serviceCase)
	s, _ := startService(t, b, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	waitReady(t, s)

	rs, err := manifest.ReadResources(strings.NewReader(strings.Replace(routeYAML, "value: /", "value: /v2", 1)), "test")
	if err != nil {
		t.Fatal(err)
	}
	published := time.Unix(0, 1_800_000_000_000_000_001)
	if _, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey("HTTPRoute", "default", "web"), rs[0], bus.WithPublished(published)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, bus.XDS, gatewayKey, func(e *bus.Entry) bool {
		return e != nil && e.Header.Get(bus.HeaderPublished) == "1800000000000000001"
	})
	waitFor(t, b, bus.IR, gatewayKey, func(e *bus.Entry) bool { return e != nil }) // written after irDelay

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					gw, _ := p.Attributes.Value("gateway")
					work, _ := p.Attributes.Value("work")
					found[m.Name+" "+gw.AsString()+" "+work.AsString()] = p.Count > 0
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					bucket, _ := p.Attributes.Value("bucket")
					op, _ := p.Attributes.Value("op")
					found[m.Name+" "+bucket.AsString()+" "+op.AsString()] = p.Value > 0
				}
			case metricdata.Gauge[int64]:
				found[m.Name] = len(d.DataPoints) == 1
			}
		}
	}
	for _, want := range []string{
		"gatewire_translator_translation_duration_seconds default/eg translate",
		"gatewire_translator_outputs_written_total xds put",
		"gatewire_translator_outputs_written_total ir put",
		"gatewire_translator_outputs_written_total status put",
		"gatewire_translator_changes_pending",
		"gatewire_translator_statuses_pending",
	} {
		if !found[want] {
			t.Errorf("no %s; recorded: %v", want, found)
		}
	}
}

// The statuses_pending gauge follows a gateway's statuses as they are
// written a chunk at a time.
func TestStatusesPendingGauge(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	s, err := New(DefaultConfig(), bustest.New(t), nil, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	gauge := func() int64 {
		t.Helper()
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if d, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "gatewire_translator_statuses_pending" && len(d.DataPoints) == 1 {
					return d.DataPoints[0].Value
				}
			}
		}
		t.Fatal("no gatewire_translator_statuses_pending")
		return 0
	}
	st := newStatusSession()
	gw := types.NamespacedName{Namespace: "ns", Name: "eg"}
	st.queueStatuses(&Output{Gateway: gw, Statuses: routeStatuses(statusChunk + 10)}, false)
	for _, want := range []int64{statusChunk + 10, 10, 0} {
		s.metrics.observePending(st)
		if got := gauge(); got != want {
			t.Fatalf("statuses pending: %d, want %d", got, want)
		}
		if err := s.writeStatusChunk(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
}
