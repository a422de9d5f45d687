package gatewayapi

import (
	"cmp"
	"slices"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// Result is the translation of one Gateway. It is owned by the caller.
type Result struct {
	// IR is what the gateway means.
	IR *irv1.Gateway
	// Statuses are the statuses this gateway gives: the Gateway's own first,
	// then its routes' (one per route, holding the parentRefs that name this
	// gateway or its ListenerSets), its BackendTLSPolicies' (the gateway as
	// ancestor, in parents) and the ListenerSets' that name it, sorted by
	// kind, namespace and name.
	Statuses []*busv1.Status
	// Proxy is what to run for the gateway.
	Proxy *busv1.Proxy
}

// processor computes one part of a translation from the inputs and from what
// the processors before it recorded.
type processor func(t *translation)

// processors run in this order on every translation. A new kind of route or
// a gateway-wide feature is one more entry.
var processors = []processor{
	processListeners,          // Gateway listeners → ports, certificates, listener conditions
	processListenerSets,       // the listeners of the ListenerSets the Gateway allows, after its own
	processRouteKindConflicts, // HTTPRoutes and GRPCRoutes that share hostnames on a listener → the losers
	processHTTPRoutes,         // HTTPRoutes → virtual hosts, backends, route statuses
	processGRPCRoutes,         // GRPCRoutes → virtual hosts (HTTP/2 backends), route statuses
	processTLSRoutes,          // TLSRoutes → TLS passthrough by SNI, route statuses
	processTCPRoutes,          // TCPRoutes → TCP proxies, route statuses
	processUDPRoutes,          // UDPRoutes → UDP proxies, route statuses
	processBackendTLSPolicies, // BackendTLSPolicies → TLS to the backends in use, policy statuses
	processGateway,            // Gateway conditions from its listeners
	processListenerSetStatus,  // ListenerSet conditions, their listeners' statuses
}

// translation is the state of one call to Translate; it is never shared.
type translation struct {
	idx     *resources.Index
	name    types.NamespacedName
	gateway *gatewayv1.Gateway

	listeners []*listener              // one per Gateway listener, in spec order
	ports     map[uint32]*port         // the IR listeners being built, by port (TCP)
	udpPorts  map[uint32]*port         // the IR listeners of UDP listeners, by port
	backends  map[string]*irv1.Backend // the backends routes send traffic to
	resolved  map[string]resolved      // backendRefs resolved so far, by backend name
	secrets   map[string]*irv1.Secret  // the certificates listeners serve, by name
	// listenerSets are the ListenerSets that name the gateway, in
	// precedence order (processListenerSets).
	listenerSets []*listenerSet
	// kindRejected are the HTTPRoutes and GRPCRoutes a listener rejects for
	// a hostname a route of the other kind has (processRouteKindConflicts).
	kindRejected map[routeOnListener]*problem
	// clientCertificate is the certificate the proxy presents to backends
	// over TLS; gatewayUnresolved says why the Gateway's own references do
	// not resolve; frontends are the client certificate validations by
	// field (see gatewayTLS).
	clientCertificate string
	gatewayUnresolved *problem
	frontends         map[string]*frontendValidation

	gatewayConditions conditions
	routeStatuses     []*busv1.Status
}

// Translate translates the Gateway gateway. It returns nil when the gateway
// does not exist or its class is not managed by gatewire: then it has no
// outputs.
func Translate(idx *resources.Index, gateway types.NamespacedName) *Result {
	gw := idx.Gateway(gateway)
	if gw == nil || !ours(idx.GatewayClass(string(gw.Spec.GatewayClassName))) {
		return nil
	}
	t := &translation{
		idx:      idx,
		name:     gateway,
		gateway:  gw,
		ports:    map[uint32]*port{},
		udpPorts: map[uint32]*port{},
		backends: map[string]*irv1.Backend{},
		resolved: map[string]resolved{},
		secrets:  map[string]*irv1.Secret{},

		frontends: map[string]*frontendValidation{},
	}
	for _, p := range processors {
		p(t)
	}
	return t.result()
}

// result assembles the outputs of a finished translation.
func (t *translation) result() *Result {
	ir := &irv1.Gateway{Namespace: t.name.Namespace, Name: t.name.Name}
	for _, p := range t.servedPorts() {
		ir.Listeners = append(ir.Listeners, p.build())
	}
	slices.SortFunc(ir.Listeners, compareListeners)
	for _, b := range t.backends {
		ir.Backends = append(ir.Backends, b)
	}
	slices.SortFunc(ir.Backends, func(a, b *irv1.Backend) int { return cmp.Compare(a.Name, b.Name) })
	ir.Secrets = t.servedSecrets(ir)

	slices.SortFunc(t.routeStatuses, func(a, b *busv1.Status) int {
		return cmp.Or(cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name))
	})
	statuses := append([]*busv1.Status{t.gatewayStatus()}, t.routeStatuses...)
	return &Result{IR: ir, Statuses: statuses, Proxy: proxyFor(t.gateway, ir)}
}

// gatewayRef names the translated Gateway in statuses.
func (t *translation) gatewayRef() *busv1.ObjectRef {
	return objectRef(gatewayv1.GroupName, resources.KindGateway, t.name.Namespace, t.name.Name)
}
