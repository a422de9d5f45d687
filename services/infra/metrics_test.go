package infra_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/infra"
)

// counters reads the int64 counters of reader as "name op reason" → value.
func counters(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, p := range sum.DataPoints {
				mode, _ := p.Attributes.Value("mode")
				op, _ := p.Attributes.Value("op")
				reason, _ := p.Attributes.Value("reason")
				key := m.Name + " " + mode.AsString() + " " + op.AsString()
				if reason.AsString() != "" {
					key += " " + reason.AsString()
				}
				out[key] += p.Value
			}
		}
	}
	return out
}

// TestMetrics applies and removes a gateway in host mode, and puts a value
// that names another gateway than its key, and checks the counts.
func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	dir := t.TempDir()
	b := newBus(t)
	start(t, hostConfig(dir), b, infra.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	putProxy(t, b, proxy("default", "web"))
	path := filepath.Join(dir, "default-web.yaml")
	testkit.Eventually(t, 10*time.Second, "bootstrap written", func() bool { return exists(path) })
	put(t, b, bus.GatewayKey("default", "other"), proxy("default", "web"))
	if err := b.Delete(context.Background(), bus.Infra, bus.GatewayKey("default", "web")); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "bootstrap removed", func() bool { return !exists(path) })
	testkit.Eventually(t, 10*time.Second, "the bad value and the removal counted", func() bool {
		c := counters(t, reader)
		return c["gatewire_infra_errors_total host apply invalid"] == 1 && c["gatewire_infra_proxies_applied_total host remove"] == 1
	})
	got := counters(t, reader)
	if _, ok := got["gatewire_infra_errors_total host apply failed"]; !ok {
		t.Error("no series of failed applies at 0")
	}
	for key, want := range map[string]int64{
		"gatewire_infra_proxies_applied_total host apply": 1,
		"gatewire_infra_errors_total host apply failed":   0,
	} {
		if got[key] != want {
			t.Errorf("%s = %d, want %d (all: %v)", key, got[key], want, got)
		}
	}
}
