package resources

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeKind stores one kind of route, R, whose pointer type is P. Every
// route kind is related the same way: to the gateways its parentRefs name,
// to the Services it sends traffic to, and to the namespaces of those
// Services when they are not its own (which takes a ReferenceGrant).
type routeKind[R any, P interface {
	*R
	metav1.Object
}] struct {
	kind     string
	objects  func(x *Index) map[types.NamespacedName]P
	parents  func(P) []gatewayv1.ParentReference
	backends func(P) []gatewayv1.BackendObjectReference
}

func (routeKind[R, P]) group() string { return gatewayv1.GroupName }

func (k routeKind[R, P]) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := P(new(R))
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	k.objects(x)[nn] = obj
	src := key(k.kind, nn)
	services := ServiceRefs(nn.Namespace, k.backends(obj))
	x.routesByGateway.set(src, ParentGateways(nn.Namespace, k.parents(obj)))
	x.listenerSets.routes.set(src, ParentListenerSets(nn.Namespace, k.parents(obj)))
	x.routesByService.set(src, services)
	x.crossRefs.set(src, crossNamespace(nn.Namespace, services))
	return nil
}

func (k routeKind[R, P]) remove(x *Index, nn types.NamespacedName) {
	delete(k.objects(x), nn)
	src := key(k.kind, nn)
	x.routesByGateway.set(src, nil)
	x.listenerSets.routes.set(src, nil)
	x.routesByService.set(src, nil)
	x.crossRefs.set(src, nil)
}

func (k routeKind[R, P]) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	objectAffects(x, key(k.kind, nn), c)
}

var (
	httpRouteKind = routeKind[gatewayv1.HTTPRoute, *gatewayv1.HTTPRoute]{
		kind:     KindHTTPRoute,
		objects:  func(x *Index) map[types.NamespacedName]*gatewayv1.HTTPRoute { return x.httpRoutes },
		parents:  func(r *gatewayv1.HTTPRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
		backends: httpRouteBackends,
	}
	grpcRouteKind = routeKind[gatewayv1.GRPCRoute, *gatewayv1.GRPCRoute]{
		kind:     KindGRPCRoute,
		objects:  func(x *Index) map[types.NamespacedName]*gatewayv1.GRPCRoute { return x.grpcRoutes },
		parents:  func(r *gatewayv1.GRPCRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
		backends: grpcRouteBackends,
	}
	tlsRouteKind = routeKind[gatewayv1.TLSRoute, *gatewayv1.TLSRoute]{
		kind:     KindTLSRoute,
		objects:  func(x *Index) map[types.NamespacedName]*gatewayv1.TLSRoute { return x.tlsRoutes },
		parents:  func(r *gatewayv1.TLSRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
		backends: func(r *gatewayv1.TLSRoute) []gatewayv1.BackendObjectReference { return l4Backends(r.Spec.Rules) },
	}
	tcpRouteKind = routeKind[gatewayv1.TCPRoute, *gatewayv1.TCPRoute]{
		kind:     KindTCPRoute,
		objects:  func(x *Index) map[types.NamespacedName]*gatewayv1.TCPRoute { return x.tcpRoutes },
		parents:  func(r *gatewayv1.TCPRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
		backends: func(r *gatewayv1.TCPRoute) []gatewayv1.BackendObjectReference { return l4Backends(r.Spec.Rules) },
	}
	udpRouteKind = routeKind[gatewayv1.UDPRoute, *gatewayv1.UDPRoute]{
		kind:     KindUDPRoute,
		objects:  func(x *Index) map[types.NamespacedName]*gatewayv1.UDPRoute { return x.udpRoutes },
		parents:  func(r *gatewayv1.UDPRoute) []gatewayv1.ParentReference { return r.Spec.ParentRefs },
		backends: func(r *gatewayv1.UDPRoute) []gatewayv1.BackendObjectReference { return l4Backends(r.Spec.Rules) },
	}
)

// l4Rule is the rule of a TLSRoute, TCPRoute or UDPRoute: the three kinds
// declare the same fields, so each converts to the others.
type l4Rule interface {
	gatewayv1.TLSRouteRule | gatewayv1.TCPRouteRule | gatewayv1.UDPRouteRule
}

// l4Backends returns the backendRefs of the rules of an L4 route.
func l4Backends[R l4Rule](rules []R) []gatewayv1.BackendObjectReference {
	var out []gatewayv1.BackendObjectReference
	for _, rule := range rules {
		for _, ref := range gatewayv1.TLSRouteRule(rule).BackendRefs {
			out = append(out, ref.BackendObjectReference)
		}
	}
	return out
}

// httpRouteBackends returns every backend an HTTPRoute names: its
// backendRefs and the backends of its RequestMirror filters.
func httpRouteBackends(r *gatewayv1.HTTPRoute) []gatewayv1.BackendObjectReference {
	var out []gatewayv1.BackendObjectReference
	mirrors := func(fs []gatewayv1.HTTPRouteFilter) {
		for _, f := range fs {
			if f.RequestMirror != nil {
				out = append(out, f.RequestMirror.BackendRef)
			}
		}
	}
	for _, rule := range r.Spec.Rules {
		mirrors(rule.Filters)
		for _, ref := range rule.BackendRefs {
			out = append(out, ref.BackendObjectReference)
			mirrors(ref.Filters)
		}
	}
	return out
}

// grpcRouteBackends returns every backend a GRPCRoute names: its
// backendRefs and the backends of its RequestMirror filters.
func grpcRouteBackends(r *gatewayv1.GRPCRoute) []gatewayv1.BackendObjectReference {
	var out []gatewayv1.BackendObjectReference
	mirrors := func(fs []gatewayv1.GRPCRouteFilter) {
		for _, f := range fs {
			if f.RequestMirror != nil {
				out = append(out, f.RequestMirror.BackendRef)
			}
		}
	}
	for _, rule := range r.Spec.Rules {
		mirrors(rule.Filters)
		for _, ref := range rule.BackendRefs {
			out = append(out, ref.BackendObjectReference)
			mirrors(ref.Filters)
		}
	}
	return out
}

// ServiceRefs returns the Services that refs, written in namespace ns,
// name, without duplicates, in order. References to other kinds are left
// out.
func ServiceRefs(ns string, refs []gatewayv1.BackendObjectReference) []types.NamespacedName {
	var out []types.NamespacedName
	for _, ref := range refs {
		if IsServiceRef(ref.Group, ref.Kind) {
			out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, ns), Name: string(ref.Name)})
		}
	}
	return out
}
