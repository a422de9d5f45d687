package proxyless

import (
	"strings"
	"testing"
)

// webHostname is served by featuresRouteYAML, on the same port (the same
// RouteConfiguration) as echo.grpc.test.
const (
	webHostname = "web.grpc.test"
	webTarget   = "xds:///" + webHostname
)

// featuresRouteYAML routes web.grpc.test with what an HTTPRoute written
// for browsers holds and gRPC-Go's xDS client must still accept: path
// prefixes that are not "/" (one with a trailing "/", one that is not a
// whole path segment of any method), and backendRequest timeouts without a
// retry policy.
const featuresRouteYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: grpc
spec:
  parentRefs:
  - name: gw
  hostnames: [web.grpc.test]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /grpc.testing.TestService}
    backendRefs:
    - {name: prefix, port: 50051}
  - matches:
    - path: {type: Exact, value: /grpc.testing.TestService/EmptyCall}
    timeouts: {backendRequest: 5s}
    backendRefs:
    - {name: empty, port: 50051}
  - matches:
    - path: {type: PathPrefix, value: /grpc.health.v1.Health/}
    timeouts: {request: 10s, backendRequest: 5s}
    backendRefs:
    - {name: health, port: 50051}
  - matches:
    - path: {type: PathPrefix, value: /grpc.health.v1.Health/Che}
    backendRefs:
    - {name: wrong, port: 50051}
`

// TestProxylessPrefixAndTimeouts checks that a gRPC-Go client accepts a
// RouteConfiguration that holds an HTTPRoute's non-root path prefixes and
// backendRequest timeouts, and routes by them as the Gateway API says:
// both for the hostname of that HTTPRoute and for another hostname of the
// same port, served by a GRPCRoute; and that it never NACKs.
func TestProxylessPrefixAndTimeouts(t *testing.T) {
	g := startGatewire(t)
	backends := map[string]*backend{}
	for _, name := range []string{"empty", "gold", "a", "b", "health", "prefix", "wrong"} {
		backends[name] = startBackend(t, name)
		g.apply(t, service(namespace, name, backends[name]))
	}
	g.apply(t, gatewayYAML)
	g.apply(t, grpcRouteYAML)
	g.apply(t, featuresRouteYAML)
	c := startClient(t, g, nodeCluster)

	t.Run("GRPCRoute on the same port", func(t *testing.T) {
		r := c.until(t, "EmptyCall on echo.grpc.test to reach its backend", callRequest{Target: target, Method: emptyCall, N: 1},
			func(r callResult) bool { return r.only("empty") })
		t.Logf("echo.grpc.test EmptyCall: %s", r)
	})
	c.until(t, "the first call on web.grpc.test to reach its backend", callRequest{Target: webTarget, Method: unaryCall, N: 1},
		func(r callResult) bool { return r.only("prefix") })
	for _, tc := range []struct {
		name, method, want string
	}{
		{"path prefix", unaryCall, "prefix"},
		{"exact path with a backendRequest timeout", emptyCall, "empty"},
		{"prefix with a trailing slash and a backendRequest timeout, not the longer prefix that ends mid-segment", healthCheck, "health"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call(t, callRequest{Target: webTarget, Method: tc.method, N: 10})
			if !r.only(tc.want) {
				t.Errorf("%s: %s, want backend %s only", tc.method, r, tc.want)
			}
		})
	}
	if logs := g.logs.String(); strings.Contains(logs, "xds nack") {
		t.Errorf("the gRPC client rejected a configuration:\n%s", logs)
	}
}
