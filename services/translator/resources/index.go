package resources

import (
	"fmt"
	"slices"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The kinds an Index holds, as they appear in resource keys.
const (
	KindGatewayClass     = "GatewayClass"
	KindGateway          = "Gateway"
	KindHTTPRoute        = "HTTPRoute"
	KindGRPCRoute        = "GRPCRoute"
	KindTLSRoute         = "TLSRoute"
	KindTCPRoute         = "TCPRoute"
	KindUDPRoute         = "UDPRoute"
	KindReferenceGrant   = "ReferenceGrant"
	KindBackendTLSPolicy = "BackendTLSPolicy"
	KindService          = "Service"
	KindEndpointSlice    = "EndpointSlice"
	KindNamespace        = "Namespace"
	KindSecret           = "Secret"
	KindConfigMap        = "ConfigMap"
)

// Index holds the objects of the resources bucket by kind and name, and the
// reverse references needed to translate one gateway. The zero value is not
// usable; call [NewIndex].
type Index struct {
	classes        map[string]*gatewayv1.GatewayClass
	gateways       map[types.NamespacedName]*gatewayv1.Gateway
	httpRoutes     map[types.NamespacedName]*gatewayv1.HTTPRoute
	grpcRoutes     map[types.NamespacedName]*gatewayv1.GRPCRoute
	tlsRoutes      map[types.NamespacedName]*gatewayv1.TLSRoute
	tcpRoutes      map[types.NamespacedName]*gatewayv1.TCPRoute
	udpRoutes      map[types.NamespacedName]*gatewayv1.UDPRoute
	grants         map[types.NamespacedName]*gatewayv1.ReferenceGrant
	policies       map[types.NamespacedName]*gatewayv1.BackendTLSPolicy
	services       map[types.NamespacedName]*corev1.Service
	endpointSlices map[types.NamespacedName]*discoveryv1.EndpointSlice
	namespaces     map[string]*corev1.Namespace
	secrets        map[types.NamespacedName]*corev1.Secret
	configMaps     map[types.NamespacedName]*corev1.ConfigMap
	listenerSets   listenerSetIndex

	// gatewaysByClass: class name → gateways of that class.
	gatewaysByClass refIndex[string]
	// routesByGateway: gateway → routes (of every kind) with a parentRef to it.
	routesByGateway refIndex[types.NamespacedName]
	// routesByService: Service → routes with a backendRef (or a mirror) to it.
	routesByService refIndex[types.NamespacedName]
	// slicesByService: Service → EndpointSlices labelled with its name.
	slicesByService refIndex[types.NamespacedName]
	// secretsByGateway: Secret → gateways whose listeners reference it.
	secretsByGateway refIndex[types.NamespacedName]
	// policiesByService: Service → BackendTLSPolicies that target it.
	policiesByService refIndex[types.NamespacedName]
	// configMapsByPolicy: ConfigMap → BackendTLSPolicies that reference it.
	configMapsByPolicy refIndex[types.NamespacedName]
	// configMapsByGateway: ConfigMap → gateways that validate client
	// certificates with its CA certificates.
	configMapsByGateway refIndex[types.NamespacedName]
	// grantsByNamespace: namespace → ReferenceGrants in it.
	grantsByNamespace refIndex[string]
	// crossRefs: (from, to) namespaces → gateways and routes that reference
	// an object in another namespace, which needs a ReferenceGrant.
	crossRefs refIndex[namespacePair]

	// clock counts the index's changes; objects holds the revision of each
	// object (see revisions and View).
	clock   *uint64
	objects revisions[ObjectKey]
	log     *changeLog
}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	clock, log := new(uint64), &changeLog{}
	return &Index{
		clock:               clock,
		log:                 log,
		objects:             newRevisions[ObjectKey](clock, log),
		classes:             map[string]*gatewayv1.GatewayClass{},
		gateways:            map[types.NamespacedName]*gatewayv1.Gateway{},
		httpRoutes:          map[types.NamespacedName]*gatewayv1.HTTPRoute{},
		grpcRoutes:          map[types.NamespacedName]*gatewayv1.GRPCRoute{},
		tlsRoutes:           map[types.NamespacedName]*gatewayv1.TLSRoute{},
		tcpRoutes:           map[types.NamespacedName]*gatewayv1.TCPRoute{},
		udpRoutes:           map[types.NamespacedName]*gatewayv1.UDPRoute{},
		grants:              map[types.NamespacedName]*gatewayv1.ReferenceGrant{},
		policies:            map[types.NamespacedName]*gatewayv1.BackendTLSPolicy{},
		services:            map[types.NamespacedName]*corev1.Service{},
		endpointSlices:      map[types.NamespacedName]*discoveryv1.EndpointSlice{},
		namespaces:          map[string]*corev1.Namespace{},
		secrets:             map[types.NamespacedName]*corev1.Secret{},
		configMaps:          map[types.NamespacedName]*corev1.ConfigMap{},
		listenerSets:        newListenerSetIndex(clock, log),
		gatewaysByClass:     newRefIndex[string](clock, log),
		routesByGateway:     newRefIndex[types.NamespacedName](clock, log),
		routesByService:     newRefIndex[types.NamespacedName](clock, log),
		slicesByService:     newRefIndex[types.NamespacedName](clock, log),
		secretsByGateway:    newRefIndex[types.NamespacedName](clock, log),
		policiesByService:   newRefIndex[types.NamespacedName](clock, log),
		configMapsByPolicy:  newRefIndex[types.NamespacedName](clock, log),
		configMapsByGateway: newRefIndex[types.NamespacedName](clock, log),
		grantsByNamespace:   newRefIndex[string](clock, log),
		crossRefs:           newRefIndex[namespacePair](clock, log),
	}
}

// Change is what one update of the index affects.
type Change struct {
	// Gateways are the gateways whose translation may differ, sorted. They
	// may name gateways that do not exist (any more).
	Gateways []types.NamespacedName
	// GatewayClasses are the classes whose own status may differ, sorted.
	GatewayClasses []string
}

// Empty reports whether the change affects nothing.
func (c Change) Empty() bool { return len(c.Gateways) == 0 && len(c.GatewayClasses) == 0 }

// Apply adds or replaces the object that r holds and returns what the change
// affects. Kinds the index does not hold are ignored (an empty Change and no
// error); so are objects of a known kind from another API group. Any version
// of a kind's group is decoded into its v1 Go type: the Gateway API's older
// versions (v1alpha2 TLSRoute, TCPRoute and UDPRoute, v1alpha3
// BackendTLSPolicy, v1beta1 ReferenceGrant, ...) share the v1 schema, and the
// provider publishes them as v1. When r.Object does not decode, the index
// keeps the previous version of the object and Apply returns an error that
// names it.
func (x *Index) Apply(r *busv1.Resource) (Change, error) {
	k, ok := kinds[r.GetKind()]
	if !ok || k.group() != r.GetGroup() {
		return Change{}, nil
	}
	nn := types.NamespacedName{Namespace: r.GetNamespace(), Name: r.GetName()}
	if nn.Name == "" {
		return Change{}, fmt.Errorf("resource %s %q: no name", r.GetKind(), r.GetNamespace())
	}
	var c changeSet
	k.affected(x, nn, &c)
	if err := k.put(x, nn, r); err != nil {
		return Change{}, fmt.Errorf("resource %s %s: %w", r.GetKind(), nn, err)
	}
	x.changed(key(r.GetKind(), nn))
	k.affected(x, nn, &c)
	return c.change(), nil
}

// Remove deletes the object kind namespace/name and returns what the change
// affects. Removing an unknown kind or a missing object is harmless.
func (x *Index) Remove(kind, namespace, name string) Change {
	k, ok := kinds[kind]
	if !ok {
		return Change{}
	}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	var c changeSet
	k.affected(x, nn, &c)
	k.remove(x, nn)
	x.changed(key(kind, nn))
	return c.change()
}

// changeSet collects a Change without duplicates.
type changeSet struct {
	gateways map[types.NamespacedName]struct{}
	classes  map[string]struct{}
}

func (c *changeSet) gateway(nn types.NamespacedName) {
	if c.gateways == nil {
		c.gateways = map[types.NamespacedName]struct{}{}
	}
	c.gateways[nn] = struct{}{}
}

func (c *changeSet) class(name string) {
	if c.classes == nil {
		c.classes = map[string]struct{}{}
	}
	c.classes[name] = struct{}{}
}

func (c *changeSet) change() Change {
	var out Change
	for nn := range c.gateways {
		out.Gateways = append(out.Gateways, nn)
	}
	slices.SortFunc(out.Gateways, compareNames)
	for name := range c.classes {
		out.GatewayClasses = append(out.GatewayClasses, name)
	}
	slices.Sort(out.GatewayClasses)
	return out
}

// changed records that the object k was put or removed.
func (x *Index) changed(k ObjectKey) {
	x.objects.bump(k)
	x.log.add(logEntry{clock: *x.clock, object: k})
}
