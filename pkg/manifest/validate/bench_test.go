package validate

import (
	"context"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// BenchmarkObject validates 1,000 HTTPRoutes per operation (those of the
// translator's BenchmarkTranslate), once their schema and the CEL rules they
// reach are compiled; it reports the cost per route. The routes are decoded once: defaulting an
// object twice gives the same object, so every iteration checks the same
// content.
func BenchmarkObject(b *testing.B) {
	const n = 1000
	routes := make([]map[string]any, n)
	for i := range routes {
		routes[i] = object(b, gatewaytest.TenantRoute("bench", "eg", i))
	}
	if err := Precompile(context.Background(), "HTTPRoute"); err != nil {
		b.Fatal(err)
	}
	if errs := Object(routes[0]); len(errs) > 0 { // compiles the rules the routes reach
		b.Fatal(errs)
	}
	b.ReportAllocs()
	start, cpu := time.Now(), testkit.CPUTime()
	for b.Loop() {
		for _, r := range routes {
			if errs := Object(r); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/route")
	b.ReportMetric(float64((testkit.CPUTime()-cpu).Nanoseconds())/float64(b.N*n), "cpu-ns/route")
	b.ReportMetric(testkit.LoadAverage(b), "load1")
}

// BenchmarkCompile measures what the first use of a kind costs: reading its
// CustomResourceDefinition, building the structural schema, the OpenAPI
// validator and the CEL programs of its storage version. A process pays it
// once per kind, the CEL programs node by node as values reach them.
func BenchmarkCompile(b *testing.B) {
	for _, kind := range []string{"Gateway", "HTTPRoute", "GRPCRoute"} {
		b.Run(kind, func(b *testing.B) {
			c := crds[kind]
			if err := c.load(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s, err := c.compileVersion(c.storage)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.rules.compileAll(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
