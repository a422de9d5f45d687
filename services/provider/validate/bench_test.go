package validate

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// benchRoute is the HTTPRoute of the translator's BenchmarkTranslate: its
// own hostname, two prefix matches with an exact header match, a
// RequestHeaderModifier and two backends weighted 80/20.
const benchRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%[1]d, namespace: bench}
spec:
  parentRefs: [{name: eg}]
  hostnames: [route-%[1]d.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api}
      headers: [{name: x-tenant, value: t%[1]d}]
    - path: {type: PathPrefix, value: /web}
      headers: [{name: x-tenant, value: t%[1]d}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: x-route, value: route-%[1]d}]
    backendRefs:
    - {name: svc-%[1]d-a, port: 80, weight: 80}
    - {name: svc-%[1]d-b, port: 80, weight: 20}
`

// BenchmarkObject validates 1,000 HTTPRoutes per operation, once their
// schema is compiled; it reports the cost per route. The routes are decoded
// once: defaulting an object twice gives the same object, so every
// iteration checks the same content.
func BenchmarkObject(b *testing.B) {
	const n = 1000
	routes := make([]map[string]any, n)
	for i := range routes {
		routes[i] = object(b, fmt.Sprintf(benchRoute, i))
	}
	if err := Precompile(context.Background(), "HTTPRoute"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start, cpu := time.Now(), cpuTime()
	for b.Loop() {
		for _, r := range routes {
			if errs := Object(r); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/route")
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*n), "cpu-ns/route")
}

// cpuTime is the user and system CPU time of the process so far: on a busy
// machine, a steadier measure than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCompile measures what the first use of a kind costs: building the
// structural schema, the OpenAPI validator and the CEL programs of its
// storage version. A process pays it once per kind.
func BenchmarkCompile(b *testing.B) {
	for _, kind := range []string{"Gateway", "HTTPRoute", "GRPCRoute"} {
		b.Run(kind, func(b *testing.B) {
			c := crds[kind]
			if err := c.load(); err != nil {
				b.Fatal(err)
			}
			def := c.versions[c.storage].def
			for b.Loop() {
				if _, err := compile(def); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
