// Package gatewaytest writes synthetic Gateway API inputs as YAML: the
// gatewire GatewayClass, Gateways, HTTPRoutes, Services and their
// EndpointSlices, for the benchmarks and scale tests of every module.
//
// Each function returns one document that starts with a "---" line, so
// documents concatenate into a multi-document stream and a single one
// decodes on its own. The functions only format text: the caller decodes
// the result the way the code under test reads its input (a file, a
// resource index, an object to validate). The same arguments always give
// the same text, so inputs built twice compare equal.
package gatewaytest

import (
	"fmt"
	"strings"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// GatewayClass is the class "gatewire", handled by gatewire's default
// controller name.
func GatewayClass() string {
	return ClassOf("gatewire", gatewayclass.DefaultControllerName)
}

// ClassOf is the GatewayClass name whose spec.controllerName is controller.
func ClassOf(name, controller string) string {
	return fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %s}
spec: {controllerName: %s}
`, name, controller)
}

// Gateway is the Gateway namespace/name of class "gatewire" with one
// listener "http" for HTTP on port 80.
func Gateway(namespace, name string) string {
	return HTTPGateway(namespace, name, "http", 80)
}

// HTTPGateway is the Gateway namespace/name of class "gatewire" with one
// HTTP listener of that name on port.
func HTTPGateway(namespace, name, listener string, port int) string {
	return GatewayOfClass("gatewire", namespace, name, listener, port)
}

// GatewayOfClass is the Gateway namespace/name of class with one HTTP
// listener of that name on port.
func GatewayOfClass(class, namespace, name, listener string, port int) string {
	return fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s, namespace: %s}
spec:
  gatewayClassName: %s
  listeners: [{name: %s, protocol: HTTP, port: %d}]
`, name, namespace, class, listener, port)
}

// Service is the Service namespace/name with one port "http" 80 that
// targets 8080.
func Service(namespace, name string) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %s, namespace: %s}
spec:
  ports: [{name: http, port: 80, targetPort: 8080}]
`, name, namespace)
}

// EndpointSlice is the IPv4 EndpointSlice "<service>-1" of the Service
// namespace/service, with port "http" 8080 and one endpoint per address.
func EndpointSlice(namespace, service string, addresses ...string) string {
	var y strings.Builder
	fmt.Fprintf(&y, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %[1]s-1
  namespace: %[2]s
  labels: {kubernetes.io/service-name: %[1]s}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
`, service, namespace)
	for _, a := range addresses {
		fmt.Fprintf(&y, "- addresses: [%s]\n", a)
	}
	return y.String()
}

// Route is an HTTPRoute of one rule that sends to port 80 of one Service.
type Route struct {
	Namespace, Name string
	Gateway         string // the parent Gateway, in the route's namespace
	Hostname        string
	Prefix          string // the path prefix of the rule's one match; "" for a rule without matches
	Service         string // the backend, in the route's namespace
}

// String is the route as a YAML document.
func (r Route) String() string {
	var y strings.Builder
	fmt.Fprintf(&y, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: %s}
spec:
  parentRefs: [{name: %s}]
  hostnames: [%s]
  rules:
`, r.Name, r.Namespace, r.Gateway, r.Hostname)
	if r.Prefix != "" {
		fmt.Fprintf(&y, "  - matches: [{path: {type: PathPrefix, value: %s}}]\n    backendRefs: [{name: %s, port: 80}]\n", r.Prefix, r.Service)
	} else {
		fmt.Fprintf(&y, "  - backendRefs: [{name: %s, port: 80}]\n", r.Service)
	}
	return y.String()
}

// TenantRoute is HTTPRoute "route-<i>" of namespace, attached to gateway,
// for host route-<i>.example.com: one rule with two prefix matches (/api
// and /web) that each need header x-tenant: t<i>, a RequestHeaderModifier
// that sets x-route, and backends "svc-<i>-a" and "svc-<i>-b" weighted
// 80/20.
func TenantRoute(namespace, gateway string, i int) string {
	return fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%[1]d, namespace: %[2]s}
spec:
  parentRefs: [{name: %[3]s}]
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
`, i, namespace, gateway)
}

// TenantBackends are the Services svc-<i>-a and svc-<i>-b of namespace
// that TenantRoute i sends to, each followed by its EndpointSlice of three
// endpoints, 10.<i/256>.<i%256>.1 to .3.
func TenantBackends(namespace string, i int) string {
	var y strings.Builder
	for _, s := range []string{"a", "b"} {
		svc := fmt.Sprintf("svc-%d-%s", i, s)
		y.WriteString(Service(namespace, svc))
		var addrs []string
		for e := 1; e <= 3; e++ {
			addrs = append(addrs, fmt.Sprintf("10.%d.%d.%d", i/256, i%256, e))
		}
		y.WriteString(EndpointSlice(namespace, svc, addrs...))
	}
	return y.String()
}

// ManyRoutes is the input of the translation benchmarks: the class, the
// Gateway bench/eg, and n TenantRoutes of namespace bench, each followed
// by its TenantBackends.
func ManyRoutes(n int) string {
	var y strings.Builder
	y.WriteString(GatewayClass())
	y.WriteString(Gateway("bench", "eg"))
	for i := range n {
		y.WriteString(TenantRoute("bench", "eg", i))
		y.WriteString(TenantBackends("bench", i))
	}
	return y.String()
}
