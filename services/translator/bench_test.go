package translator

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// BenchmarkTranslate measures the offline translation of one gateway (index
// → IR and statuses → validated xDS snapshot) with one HTTP listener and n
// routes, each with its own hostname, two prefix matches with an exact
// header match, a RequestHeaderModifier and two backends weighted 80/20 to
// Services of three endpoints each.
func BenchmarkTranslate(b *testing.B) {
	for _, n := range []int{100, 1000} {
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

// The objects of the benchmark: the gateway, then per route i the route
// and its two Services (s is "a" or "b") with their EndpointSlices.
const (
	benchGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gatewire}
spec: {controllerName: gatewire.dev/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: bench}
spec:
  gatewayClassName: gatewire
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	benchRoute = `---
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
	benchService = `---
apiVersion: v1
kind: Service
metadata: {name: svc-%[1]d-%[2]s, namespace: bench}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: svc-%[1]d-%[2]s-1
  namespace: bench
  labels: {kubernetes.io/service-name: svc-%[1]d-%[2]s}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
- addresses: [10.%[3]d.%[4]d.1]
- addresses: [10.%[3]d.%[4]d.2]
- addresses: [10.%[3]d.%[4]d.3]
`
)

func benchIndex(tb testing.TB, routes int) *resources.Index {
	tb.Helper()
	var y strings.Builder
	y.WriteString(benchGateway)
	for i := range routes {
		fmt.Fprintf(&y, benchRoute, i)
		for _, s := range []string{"a", "b"} {
			fmt.Fprintf(&y, benchService, i, s, i/256, i%256)
		}
	}
	idx, err := resources.LoadYAML(strings.NewReader(y.String()), "bench")
	if err != nil {
		tb.Fatal(err)
	}
	return idx
}
