package translator

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/services/translator/resources"
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
			for b.Loop() {
				out := Translate(idx, gw)
				if out == nil || out.XDSError != nil {
					b.Fatalf("translation failed: %v", out)
				}
			}
		})
	}
}

// benchIndex indexes the input of the benchmark: one gateway and routes
// HTTPRoutes with their Services and EndpointSlices.
func benchIndex(tb testing.TB, routes int) *resources.Index {
	tb.Helper()
	idx, err := resources.LoadYAML(strings.NewReader(gatewaytest.ManyRoutes(routes)), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return idx
}
