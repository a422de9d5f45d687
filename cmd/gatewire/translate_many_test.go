package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The objects of a large input, the shape of the translator's
// BenchmarkTranslate: one gateway, then per route i the route and its two
// Services (s is "a" or "b") with their EndpointSlices.
const (
	manyGateway = `apiVersion: gateway.networking.k8s.io/v1
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
	manyRoute = `---
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
	manyService = `---
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

// writeManyRoutes writes an input of n routes to a file of tb's and returns
// its path.
func writeManyRoutes(tb testing.TB, n int) string {
	tb.Helper()
	var y strings.Builder
	y.WriteString(manyGateway)
	for i := range n {
		fmt.Fprintf(&y, manyRoute, i)
		for _, s := range []string{"a", "b"} {
			fmt.Fprintf(&y, manyService, i, s, i/256, i%256)
		}
	}
	path := filepath.Join(tb.TempDir(), "routes.yaml")
	if err := os.WriteFile(path, []byte(y.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestTranslateManyRoutes runs the whole command on 1,000 routes (100 under
// the race detector, which slows validation tenfold) and reports its wall and
// CPU time; every route must be accepted.
func TestTranslateManyRoutes(t *testing.T) {
	n := 1000
	if raceEnabled {
		n = 100
	}
	in := writeManyRoutes(t, n)
	var stdout, stderr bytes.Buffer
	opts := translateOptions{inputs: inputs{in}, output: "status", format: "yaml", verbose: true}
	start, cpu := time.Now(), cpuTime()
	if err := translate(context.Background(), opts, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d routes: wall %v, CPU %v (%.0f MB printed)\n%s", n, time.Since(start).Round(time.Millisecond),
		(cpuTime() - cpu).Round(time.Millisecond), float64(stdout.Len())/1e6, stderr.String())
	out := stdout.String()
	if got := strings.Count(out, "message: Route is accepted"); got != n {
		t.Errorf("%d routes accepted, want %d", got, n)
	}
	if want := fmt.Sprintf("attachedRoutes: %d\n", n); !strings.Contains(out, want) {
		t.Errorf("the listener does not say %q", want)
	}
}

// BenchmarkTranslateCommand runs the whole command (read, validate, index,
// translate, print the status) on 1,000 routes; the validation schemas are
// compiled in the first iteration only, as in a process.
func BenchmarkTranslateCommand(b *testing.B) {
	in := writeManyRoutes(b, 1000)
	opts := translateOptions{inputs: inputs{in}, output: "status", format: "yaml"}
	b.ReportAllocs()
	for b.Loop() {
		if err := translate(context.Background(), opts, nil, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
