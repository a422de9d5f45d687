package translator

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// BenchmarkIRWrite measures what writing a gateway's IR costs the
// translator before the bus: hashing its encoding and compressing it.
func BenchmarkIRWrite(b *testing.B) {
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			out := Translate(benchIndex(b, n), gatewayclass.DefaultControllerName, types.NamespacedName{Namespace: "bench", Name: "eg"})
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true)) // the bus encoder's
			var size, packed int
			for b.Loop() {
				_, data := fingerprintAndBytes(out.IR)
				z := enc.EncodeAll(data, nil)
				size, packed = len(data), len(z)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(packed), "zstd-bytes")
		})
	}
}
