package resources

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Reader is what translation reads of the index. [*Index] reads; a
// [*View] reads and records what it read.
type Reader interface {
	GatewayClass(name string) *gatewayv1.GatewayClass
	Gateway(nn types.NamespacedName) *gatewayv1.Gateway
	HTTPRoutesFor(gateway types.NamespacedName) []*gatewayv1.HTTPRoute
	GRPCRoutesFor(gateway types.NamespacedName) []*gatewayv1.GRPCRoute
	TLSRoutesFor(gateway types.NamespacedName) []*gatewayv1.TLSRoute
	TCPRoutesFor(gateway types.NamespacedName) []*gatewayv1.TCPRoute
	UDPRoutesFor(gateway types.NamespacedName) []*gatewayv1.UDPRoute
	Service(nn types.NamespacedName) *corev1.Service
	EndpointSlicesFor(service types.NamespacedName) []*discoveryv1.EndpointSlice
	Namespace(name string) *corev1.Namespace
	Secret(nn types.NamespacedName) *corev1.Secret
	ConfigMap(nn types.NamespacedName) *corev1.ConfigMap
	ReferenceGrantsIn(ns string) []*gatewayv1.ReferenceGrant
	BackendTLSPoliciesFor(service types.NamespacedName) []*gatewayv1.BackendTLSPolicy
	ListenerSetsFor(gateway types.NamespacedName) []*gatewayv1.ListenerSet
}

var (
	_ Reader = (*Index)(nil)
	_ Reader = (*View)(nil)
)

// View reads an Index and records in its Deps the revision of everything
// it looks up, so that what was computed from it can be reused while
// [Deps.Unchanged] holds. Routes are looked up through their sets: a
// route's own revision is recorded with [View.Route].
type View struct {
	x    *Index
	deps *Deps
}

// View returns a View of x that records into d.
func (x *Index) View(d *Deps) *View { return &View{x: x, deps: d} }

func (v *View) object(kind string, nn types.NamespacedName) {
	v.deps.add(v.x.objects.cell(key(kind, nn)))
}

// Route records the revision of the route kind nn.
func (v *View) Route(kind string, nn types.NamespacedName) { v.object(kind, nn) }

// GatewayClass implements Reader.
func (v *View) GatewayClass(name string) *gatewayv1.GatewayClass {
	v.object(KindGatewayClass, types.NamespacedName{Name: name})
	return v.x.GatewayClass(name)
}

// Gateway implements Reader.
func (v *View) Gateway(nn types.NamespacedName) *gatewayv1.Gateway {
	v.object(KindGateway, nn)
	return v.x.Gateway(nn)
}

// HTTPRoutesFor implements Reader.
func (v *View) HTTPRoutesFor(gw types.NamespacedName) []*gatewayv1.HTTPRoute {
	v.routesOf(gw)
	return v.x.HTTPRoutesFor(gw)
}

// GRPCRoutesFor implements Reader.
func (v *View) GRPCRoutesFor(gw types.NamespacedName) []*gatewayv1.GRPCRoute {
	v.routesOf(gw)
	return v.x.GRPCRoutesFor(gw)
}

// TLSRoutesFor implements Reader.
func (v *View) TLSRoutesFor(gw types.NamespacedName) []*gatewayv1.TLSRoute {
	v.routesOf(gw)
	return v.x.TLSRoutesFor(gw)
}

// TCPRoutesFor implements Reader.
func (v *View) TCPRoutesFor(gw types.NamespacedName) []*gatewayv1.TCPRoute {
	v.routesOf(gw)
	return v.x.TCPRoutesFor(gw)
}

// UDPRoutesFor implements Reader.
func (v *View) UDPRoutesFor(gw types.NamespacedName) []*gatewayv1.UDPRoute {
	v.routesOf(gw)
	return v.x.UDPRoutesFor(gw)
}

// routesOf records the routes of gw: those naming it, and those naming
// its ListenerSets.
func (v *View) routesOf(gw types.NamespacedName) {
	v.deps.add(v.x.routesByGateway.revs.cell(gw))
	v.deps.add(v.x.listenerSets.byGateway.revs.cell(gw))
	for _, ls := range v.x.listenerSets.byGateway.sourcesOf(KindListenerSet, gw) {
		v.deps.add(v.x.listenerSets.routes.revs.cell(ls))
	}
}

// Service implements Reader.
func (v *View) Service(nn types.NamespacedName) *corev1.Service {
	v.object(KindService, nn)
	return v.x.Service(nn)
}

// EndpointSlicesFor implements Reader.
func (v *View) EndpointSlicesFor(svc types.NamespacedName) []*discoveryv1.EndpointSlice {
	v.deps.add(v.x.slicesByService.revs.cell(svc))
	return v.x.EndpointSlicesFor(svc)
}

// Namespace implements Reader.
func (v *View) Namespace(name string) *corev1.Namespace {
	v.object(KindNamespace, types.NamespacedName{Name: name})
	return v.x.Namespace(name)
}

// Secret implements Reader.
func (v *View) Secret(nn types.NamespacedName) *corev1.Secret {
	v.object(KindSecret, nn)
	return v.x.Secret(nn)
}

// ConfigMap implements Reader.
func (v *View) ConfigMap(nn types.NamespacedName) *corev1.ConfigMap {
	v.object(KindConfigMap, nn)
	return v.x.ConfigMap(nn)
}

// ReferenceGrantsIn implements Reader.
func (v *View) ReferenceGrantsIn(ns string) []*gatewayv1.ReferenceGrant {
	v.deps.add(v.x.grantsByNamespace.revs.cell(ns))
	return v.x.ReferenceGrantsIn(ns)
}

// BackendTLSPoliciesFor implements Reader.
func (v *View) BackendTLSPoliciesFor(svc types.NamespacedName) []*gatewayv1.BackendTLSPolicy {
	v.deps.add(v.x.policiesByService.revs.cell(svc))
	return v.x.BackendTLSPoliciesFor(svc)
}

// ListenerSetsFor implements Reader.
func (v *View) ListenerSetsFor(gw types.NamespacedName) []*gatewayv1.ListenerSet {
	v.deps.add(v.x.listenerSets.byGateway.revs.cell(gw))
	return v.x.ListenerSetsFor(gw)
}
