package translator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// BenchmarkTranslate measures the offline translation of one gateway (index
// → IR and statuses → validated xDS snapshot) with one HTTP listener and n
// routes, each with its own hostname, two prefix matches with an exact
// header match, a RequestHeaderModifier and two backends weighted 80/20 to
// Services of three endpoints each.
func BenchmarkTranslate(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			idx := benchIndex(b, n)
			gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				out := Translate(idx, gatewayclass.DefaultControllerName, gw)
				if out == nil || out.XDSError != nil {
					b.Fatalf("translation failed: %v", out)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the process's CPU time per operation since since, the
// garbage collector's work on the other cores included (the measure of the
// translation targets, steadier than ns/op on a shared machine), and the
// machine's load average at the end.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64((testkit.CPUTime()-since).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(testkit.LoadAverage(b), "load1")
}

// benchIndex indexes the input of the benchmark: one gateway and routes
// HTTPRoutes with their Services and EndpointSlices.
func benchIndex(tb testing.TB, routes int) *resources.Index {
	tb.Helper()
	idx, err := resourcestest.Load(strings.NewReader(gatewaytest.ManyRoutes(routes)), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return idx
}

// BenchmarkRouteEdit measures the incremental translation of a gateway of
// n routes (the shape of BenchmarkTranslate) after one route's header value
// changes: what the translator service does for a route edit, the writes
// to the bus aside.
func BenchmarkRouteEdit(b *testing.B) {
	for _, n := range []int{300, 1000, 3000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			idx := benchIndex(b, n)
			gw := types.NamespacedName{Namespace: "bench", Name: "eg"}
			x := newTranslator(idx, gatewayclass.DefaultControllerName)
			x.translate(gw)
			edits := make([]*busv1.Resource, 2)
			for k := range edits {
				y := strings.Replace(gatewaytest.TenantRoute("bench", "eg", n/2), fmt.Sprintf("value: route-%d}", n/2), fmt.Sprintf("value: edit-%d}", k), 1)
				rs, err := manifest.ReadResources(strings.NewReader(y), "edit")
				if err != nil {
					b.Fatal(err)
				}
				edits[k] = rs[0]
			}
			round := 0
			b.ReportAllocs()
			cpu := testkit.CPUTime()
			for b.Loop() {
				round++
				if _, err := idx.Apply(edits[round%2]); err != nil {
					b.Fatal(err)
				}
				out := x.translate(gw)
				if out == nil || out.Build == nil || out.RoutesBuilt != 1 || len(out.Build.Changed) != 1 {
					b.Fatalf("edit: %v", out)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
