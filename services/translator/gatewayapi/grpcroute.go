package gatewayapi

import (
	"github.com/gatewire/gatewire/services/translator/resources"
)

// processGRPCRoutes attaches the GRPCRoutes whose parentRefs name the
// gateway and records the status of each. A GRPCRoute attaches to HTTP and
// HTTPS listeners like an HTTPRoute; its IR routes (Route.grpc set, HTTP/2
// backends) share the virtual hosts of HTTPRoutes and follow the same
// precedence.
func processGRPCRoutes(t *translation) {
	routes := t.idx.GRPCRoutesFor(t.name)
	t.hasGRPC = t.hasGRPC || len(routes) > 0
	for _, route := range routes {
		t.place(t.unit(resources.KindGRPCRoute, &route.ObjectMeta, func(b *routeBuilder) *routeUnit {
			return b.attachRoute(resources.KindGRPCRoute, &route.ObjectMeta, route.Spec.ParentRefs, route.Spec.Hostnames, b.buildGRPCRules(route))
		}))
	}
}
