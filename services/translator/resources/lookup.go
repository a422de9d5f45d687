package resources

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayClass returns the class named name, or nil.
func (x *Index) GatewayClass(name string) *gatewayv1.GatewayClass { return x.classes[name] }

// GatewayClasses returns the names of every class, sorted.
func (x *Index) GatewayClasses() []string {
	out := make([]string, 0, len(x.classes))
	for name := range x.classes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Gateway returns the gateway nn, or nil.
func (x *Index) Gateway(nn types.NamespacedName) *gatewayv1.Gateway { return x.gateways[nn] }

// Gateways returns the names of every gateway, sorted.
func (x *Index) Gateways() []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(x.gateways))
	for nn := range x.gateways {
		out = append(out, nn)
	}
	slices.SortFunc(out, compareNames)
	return out
}

// HTTPRoute returns the route nn, or nil.
func (x *Index) HTTPRoute(nn types.NamespacedName) *gatewayv1.HTTPRoute { return x.httpRoutes[nn] }

// HTTPRoutesFor returns the HTTPRoutes with a parentRef to gateway, sorted by
// namespace and name.
func (x *Index) HTTPRoutesFor(gateway types.NamespacedName) []*gatewayv1.HTTPRoute {
	return routesFor(x, KindHTTPRoute, x.httpRoutes, gateway)
}

// GRPCRoutesFor returns the GRPCRoutes with a parentRef to gateway, sorted
// by namespace and name.
func (x *Index) GRPCRoutesFor(gateway types.NamespacedName) []*gatewayv1.GRPCRoute {
	return routesFor(x, KindGRPCRoute, x.grpcRoutes, gateway)
}

// TLSRoutesFor returns the TLSRoutes with a parentRef to gateway, sorted by
// namespace and name.
func (x *Index) TLSRoutesFor(gateway types.NamespacedName) []*gatewayv1.TLSRoute {
	return routesFor(x, KindTLSRoute, x.tlsRoutes, gateway)
}

// TCPRoutesFor returns the TCPRoutes with a parentRef to gateway, sorted by
// namespace and name.
func (x *Index) TCPRoutesFor(gateway types.NamespacedName) []*gatewayv1.TCPRoute {
	return routesFor(x, KindTCPRoute, x.tcpRoutes, gateway)
}

// UDPRoutesFor returns the UDPRoutes with a parentRef to gateway, sorted by
// namespace and name.
func (x *Index) UDPRoutesFor(gateway types.NamespacedName) []*gatewayv1.UDPRoute {
	return routesFor(x, KindUDPRoute, x.udpRoutes, gateway)
}

func routesFor[R any](x *Index, kind string, objects map[types.NamespacedName]*R, gateway types.NamespacedName) []*R {
	return objectsNamed(objects, x.routeNames(kind, gateway))
}

// objectsNamed returns the object of each name, in order.
func objectsNamed[T any](objects map[types.NamespacedName]*T, names []types.NamespacedName) []*T {
	out := make([]*T, 0, len(names))
	for _, nn := range names {
		out = append(out, objects[nn])
	}
	return out
}

// Service returns the Service nn, or nil.
func (x *Index) Service(nn types.NamespacedName) *corev1.Service { return x.services[nn] }

// EndpointSlicesFor returns the EndpointSlices of the Service nn (by their
// kubernetes.io/service-name label), sorted by name.
func (x *Index) EndpointSlicesFor(service types.NamespacedName) []*discoveryv1.EndpointSlice {
	return objectsNamed(x.endpointSlices, x.slicesByService.sourcesOf(KindEndpointSlice, service))
}

// Namespace returns the Namespace name, or nil.
func (x *Index) Namespace(name string) *corev1.Namespace { return x.namespaces[name] }

// Secret returns the Secret nn, or nil.
func (x *Index) Secret(nn types.NamespacedName) *corev1.Secret { return x.secrets[nn] }

// ConfigMap returns the ConfigMap nn, or nil.
func (x *Index) ConfigMap(nn types.NamespacedName) *corev1.ConfigMap { return x.configMaps[nn] }

// ReferenceGrantsIn returns the ReferenceGrants of namespace ns, sorted by
// name.
func (x *Index) ReferenceGrantsIn(ns string) []*gatewayv1.ReferenceGrant {
	return objectsNamed(x.grants, x.grantsByNamespace.sourcesOf(KindReferenceGrant, ns))
}

// BackendTLSPoliciesFor returns the BackendTLSPolicies that target the
// Service nn, sorted by name.
func (x *Index) BackendTLSPoliciesFor(service types.NamespacedName) []*gatewayv1.BackendTLSPolicy {
	return objectsNamed(x.policies, x.policiesByService.sourcesOf(KindBackendTLSPolicy, service))
}

// ParentGateways returns the Gateways that parentRefs of an object in
// namespace name, without duplicates, in order. References to other kinds of
// parent are left out.
func ParentGateways(namespace string, refs []gatewayv1.ParentReference) []types.NamespacedName {
	var out []types.NamespacedName
	for _, ref := range refs {
		if !IsGatewayRef(ref) {
			continue
		}
		out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, namespace), Name: string(ref.Name)})
	}
	return out
}

// IsGatewayRef reports whether ref names a Gateway (the default group and kind).
func IsGatewayRef(ref gatewayv1.ParentReference) bool {
	return orDefault(ref.Group, gatewayv1.GroupName) == gatewayv1.GroupName &&
		orDefault(ref.Kind, KindGateway) == KindGateway
}

// IsServiceRef reports whether a backend reference of this group and kind
// names a core Service (the default).
func IsServiceRef(group *gatewayv1.Group, kind *gatewayv1.Kind) bool {
	return orDefault(group, corev1.GroupName) == corev1.GroupName && orDefault(kind, KindService) == KindService
}

// IsSecretRef reports whether a certificate reference of this group and
// kind names a core Secret (the default).
func IsSecretRef(group *gatewayv1.Group, kind *gatewayv1.Kind) bool {
	return orDefault(group, corev1.GroupName) == corev1.GroupName && orDefault(kind, KindSecret) == KindSecret
}

// orDefault returns *p, or def when p is nil. An explicit empty group is the
// core group, so only nil takes the default.
func orDefault[T ~string](p *T, def string) string {
	if p == nil {
		return def
	}
	return string(*p)
}

// NamespaceOr returns the namespace ns names, or def when it names none.
func NamespaceOr(ns *gatewayv1.Namespace, def string) string {
	if ns == nil || *ns == "" {
		return def
	}
	return string(*ns)
}

// HasBackendTLSPolicies reports whether the index holds any
// BackendTLSPolicy.
func (x *Index) HasBackendTLSPolicies() bool { return len(x.policies) > 0 }

// Has reports whether the index holds the object kind namespace/name.
func (x *Index) Has(kind, namespace, name string) bool {
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	switch kind {
	case KindGatewayClass:
		return x.classes[name] != nil
	case KindGateway:
		return x.gateways[nn] != nil
	case KindHTTPRoute:
		return x.httpRoutes[nn] != nil
	case KindGRPCRoute:
		return x.grpcRoutes[nn] != nil
	case KindTLSRoute:
		return x.tlsRoutes[nn] != nil
	case KindTCPRoute:
		return x.tcpRoutes[nn] != nil
	case KindUDPRoute:
		return x.udpRoutes[nn] != nil
	case KindReferenceGrant:
		return x.grants[nn] != nil
	case KindBackendTLSPolicy:
		return x.policies[nn] != nil
	case KindService:
		return x.services[nn] != nil
	case KindEndpointSlice:
		return x.endpointSlices[nn] != nil
	case KindNamespace:
		return x.namespaces[name] != nil
	case KindSecret:
		return x.secrets[nn] != nil
	case KindConfigMap:
		return x.configMaps[nn] != nil
	case KindListenerSet:
		return x.listenerSets.objects[nn] != nil
	}
	return false
}

// Known reports whether the index holds objects of kind.
func Known(kind string) bool {
	_, ok := kinds[kind]
	return ok
}
