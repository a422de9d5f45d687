package proxyless

import (
	"context"
	"os"
	"slices"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3" // decodes LDS responses
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

func TestMain(m *testing.M) {
	if testkit.InChild("TestClientProcess") {
		// The client process: gRPC's xDS client keeps goroutines of its
		// own after its channels close.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

const (
	namespace   = "grpc"
	nodeCluster = namespace + "/gw"
	hostname    = "echo.grpc.test"
	target      = "xds:///" + hostname
)

// gatewayYAML is the class and the Gateway grpc/gw, with an HTTP listener
// "grpc" on port 8080.
var gatewayYAML = gatewaytest.GatewayClass() + gatewaytest.HTTPGateway(namespace, "gw", "grpc", 8080)

// routeYAML routes the methods of echo.grpc.test as a GRPCRoute would,
// with the path and header matches a GRPCRoute becomes: a method (exact
// path), a method and a header, a method split 80/20 by weight, and a
// whole service (every path under /grpc.health.v1.Health/).
const routeYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: echo
  namespace: grpc
spec:
  parentRefs:
  - name: gw
  hostnames: [echo.grpc.test]
  rules:
  - matches:
    - path: {type: Exact, value: /grpc.testing.TestService/EmptyCall}
    backendRefs:
    - {name: empty, port: 50051}
  - matches:
    - path: {type: Exact, value: /grpc.testing.TestService/UnaryCall}
      headers:
      - {name: x-tier, value: gold}
    backendRefs:
    - {name: gold, port: 50051}
  - matches:
    - path: {type: Exact, value: /grpc.testing.TestService/UnaryCall}
    backendRefs:
    - {name: a, port: 50051, weight: 80}
    - {name: b, port: 50051, weight: 20}
  - matches:
    - path: {type: RegularExpression, value: '/grpc\.health\.v1\.Health/.*'}
    backendRefs:
    - {name: health, port: 50051}
`

// grpcRouteYAML is routeYAML as a GRPCRoute: the service match becomes
// the path prefix /grpc.health.v1.Health/.
const grpcRouteYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata:
  name: echo
  namespace: grpc
spec:
  parentRefs:
  - name: gw
  hostnames: [echo.grpc.test]
  rules:
  - matches:
    - method: {service: grpc.testing.TestService, method: EmptyCall}
    backendRefs:
    - {name: empty, port: 50051}
  - matches:
    - method: {service: grpc.testing.TestService, method: UnaryCall}
      headers:
      - {name: x-tier, value: gold}
    backendRefs:
    - {name: gold, port: 50051}
  - matches:
    - method: {service: grpc.testing.TestService, method: UnaryCall}
    backendRefs:
    - {name: a, port: 50051, weight: 80}
    - {name: b, port: 50051, weight: 20}
  - matches:
    - method: {service: grpc.health.v1.Health}
    backendRefs:
    - {name: health, port: 50051}
`

// weightCalls and weightTolerance: 1,000 calls split 80/20 must give
// backend a between 75% and 85% of them.
const (
	weightCalls     = 1000
	weightTolerance = 0.05
)

// TestProxylessRouting runs gatewire with real gRPC backends behind a
// GRPCRoute, and behind the equivalent HTTPRoute, and checks, with a
// gRPC-Go client dialing xds:///<hostname>, that each method reaches the
// backend its route names.
func TestProxylessRouting(t *testing.T) {
	t.Run("GRPCRoute", func(t *testing.T) { testRouting(t, "GRPCRoute", grpcRouteYAML) })
	t.Run("HTTPRoute", func(t *testing.T) { testRouting(t, "HTTPRoute", routeYAML) })
}

// testRouting runs the checks of TestProxylessRouting with the route echo
// of kind, described by yaml.
func testRouting(t *testing.T, kind, yaml string) {
	g := startGatewire(t)
	backends := map[string]*backend{}
	for _, name := range []string{"empty", "empty-2", "gold", "a", "b", "health"} {
		backends[name] = startBackend(t, name)
	}
	g.apply(t, gatewayYAML)
	for _, name := range []string{"empty", "gold", "a", "b", "health"} {
		g.apply(t, service(namespace, name, backends[name]))
	}
	g.apply(t, yaml)
	c := startClient(t, g, nodeCluster)
	c.until(t, "the first call to reach its backend", callRequest{Target: target, Method: emptyCall, N: 1},
		func(r callResult) bool { return r.only("empty") })

	t.Run("method", func(t *testing.T) {
		if r := c.call(t, callRequest{Target: target, Method: emptyCall, N: 20}); !r.only("empty") {
			t.Errorf("EmptyCall: %s, want backend empty only", r)
		}
	})
	t.Run("header", func(t *testing.T) {
		req := callRequest{Target: target, Method: unaryCall, Headers: map[string]string{"x-tier": "gold"}, N: 20}
		if r := c.call(t, req); !r.only("gold") {
			t.Errorf("UnaryCall with x-tier: gold: %s, want backend gold only", r)
		}
	})
	t.Run("service", func(t *testing.T) {
		if r := c.call(t, callRequest{Target: target, Method: healthCheck, N: 20}); !r.only("health") {
			t.Errorf("Health/Check: %s, want backend health only", r)
		}
	})
	t.Run("no route", func(t *testing.T) {
		r := c.call(t, callRequest{Target: target, Method: unimplementedCall, N: 5})
		if r.Codes["Unavailable"] != 5 {
			t.Errorf("UnimplementedCall, which no route matches: %s, want 5 Unavailable", r)
		}
		t.Logf("a method no route matches: %s", r.LastError)
	})
	t.Run("weights", func(t *testing.T) { checkWeights(t, c) })
	t.Run("envoy", func(t *testing.T) { checkEnvoyListeners(t, g) })
	t.Run("endpoints change", func(t *testing.T) {
		g.apply(t, endpointSlice(namespace, "empty", backends["empty-2"]))
		c.until(t, "EmptyCall to move to empty-2", callRequest{Target: target, Method: emptyCall, N: 1},
			func(r callResult) bool { return r.only("empty-2") })
		if r := c.call(t, callRequest{Target: target, Method: emptyCall, N: 50}); !r.only("empty-2") {
			t.Errorf("EmptyCall after the EndpointSlice moved: %s, want backend empty-2 only", r)
		}
	})
	t.Run("route removed", func(t *testing.T) {
		g.remove(t, kind, namespace, "echo")
		r := c.until(t, "calls to fail", callRequest{Target: target, Method: emptyCall, N: 1},
			func(r callResult) bool { return r.Codes["Unavailable"] == 1 })
		t.Logf("after the route was removed: %s", r.LastError)
		if r := c.call(t, callRequest{Target: target, Method: unaryCall, N: 5}); r.Codes["Unavailable"] != 5 {
			t.Errorf("UnaryCall after the route was removed: %s, want 5 Unavailable", r)
		}
	})
}

// checkWeights makes weightCalls calls split 80/20 between backends a and
// b and checks the split.
func checkWeights(t *testing.T, c *client) {
	r := c.call(t, callRequest{Target: target, Method: unaryCall, N: weightCalls})
	if len(r.Codes) != 0 || r.Backends["a"]+r.Backends["b"] != weightCalls {
		t.Fatalf("UnaryCall: %s, want %d calls on a and b", r, weightCalls)
	}
	share := float64(r.Backends["a"]) / weightCalls
	t.Logf("weights 80/20 over %d calls: a %d, b %d (a %.1f%%)", weightCalls, r.Backends["a"], r.Backends["b"], 100*share)
	if share < 0.8-weightTolerance || share > 0.8+weightTolerance {
		t.Errorf("a got %.1f%% of the calls, want 80%% ± %.0f points", 100*share, 100*weightTolerance)
	}
}

// checkEnvoyListeners asks for listeners as an Envoy of the same gateway,
// with go-control-plane's ADS client, and checks that it gets the Envoy
// listener and none of the API listeners.
func checkEnvoyListeners(t *testing.T, g *gatewire) {
	conn, err := grpc.NewClient(g.xdsAddr, grpc.WithTransportCredentials(g.envoyCreds(t, nodeCluster)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ads := sotw.NewADSClient(ctx, &core.Node{Id: "envoy-test", Cluster: nodeCluster}, resource.ListenerType)
	if err := ads.InitConnect(conn); err != nil {
		t.Fatalf("ADS connect: %v", err)
	}
	resp, err := ads.Fetch()
	if err != nil {
		t.Fatalf("LDS: %v", err)
	}
	var names []string
	for _, a := range resp.Resources {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, cache.GetResourceName(m))
	}
	if !slices.Equal(names, []string{"http-8080"}) {
		t.Errorf("an Envoy of %s got listeners %q, want http-8080 only", nodeCluster, names)
	}
	if err := ads.Ack(); err != nil {
		t.Errorf("ACK: %v", err)
	}
}
