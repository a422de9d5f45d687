package bus_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// BenchmarkBatchPut writes 1,000 xDS resources of 700 bytes in a batch,
// with the options the translator gives each (a source revision and two
// headers of its own), to an embedded nats-server: the per-write cost of
// a translator's cold start, the server's share included (its CPU time is
// the process's).
func BenchmarkBatchPut(b *testing.B) {
	bb := bustest.New(b)
	ctx := context.Background()
	value := []byte(strings.Repeat("v", 700))
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "default.gw.vh.route-" + strconv.Itoa(i)
	}
	rev := uint64(0)
	b.ReportAllocs()
	cpu := testkit.CPUTime()
	for b.Loop() {
		rev++
		batch := bb.Batch(bus.XDS)
		for _, k := range keys {
			r := &busv1.XdsResource{TypeUrl: "type.googleapis.com/envoy.config.route.v3.VirtualHost", Name: k, Value: value, Version: "0123456789abcdef"}
			batch.Put(ctx, k, r, bus.WithSourceRevision(rev), bus.WithHeader("Gatewire-Digest", "0123456789abcdef0123456789abcdef"), bus.WithHeader("Gatewire-Writer", "translator-0"))
		}
		if err := batch.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((testkit.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(testkit.LoadAverage(b), "load1")
}
