package gatewayapi

import (
	"cmp"
	"slices"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"

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
	// RoutesBuilt is how many route units a [Translator] built for this
	// result (the others it reused); Translate builds them all and leaves
	// it 0.
	RoutesBuilt int
	// Patched is set when a [Translator] patched its last translation
	// instead of translating the gateway again.
	Patched bool
}

// processor computes one part of a translation from the gateway's
// context, the routes, and what the processors before it recorded.
type processor func(t *translation)

// processors run in this order on every translation, after the context
// (the listeners, see buildContext) is built or reused. A new kind of route
// or a gateway-wide feature is one more entry.
var processors = []processor{
	processRouteKindConflicts, // HTTPRoutes and GRPCRoutes that share hostnames on a listener → the losers
	processHTTPRoutes,         // HTTPRoutes → route units → virtual hosts, backends, route statuses
	processGRPCRoutes,         // GRPCRoutes → route units (HTTP/2 backends) → the same
	processTLSRoutes,          // TLSRoutes → TLS passthrough by SNI, route statuses
	processTCPRoutes,          // TCPRoutes → TCP proxies, route statuses
	processUDPRoutes,          // UDPRoutes → UDP proxies, route statuses
	processBackendTLSPolicies, // BackendTLSPolicies → TLS to the backends in use, policy statuses
	processGateway,            // Gateway conditions from its listeners
	processListenerSetStatus,  // ListenerSet conditions, their listeners' statuses
}

// translation is one translation of a gateway: its context, the route
// units, and the IR listeners, backends and statuses they assemble into.
// It is never shared.
type translation struct {
	*gatewayCtx
	idx  resources.Reader
	memo *gatewayMemo // what earlier translations built; nil for none
	// l4 resolves the backends of TLS, TCP and UDP routes and selects
	// their listeners.
	l4 *routeBuilder

	ports    map[uint32]*port         // the IR listeners being built, by port (TCP)
	udpPorts map[uint32]*port         // the IR listeners of UDP listeners, by port
	backends map[string]*irv1.Backend // the backends routes send traffic to
	// attached counts the routes attached to each listener.
	attached map[*listener]int32
	// kindRejected are the HTTPRoutes and GRPCRoutes a listener rejects for
	// a hostname a route of the other kind has (processRouteKindConflicts).
	kindRejected map[routeOnListener]*problem

	gatewayConditions conditions
	routeStatuses     []*busv1.Status

	// What the gateway has that a patch does not follow (see patch.go).
	hasGRPC, hasL4, hasPolicies bool
}

// Translate translates the Gateway gateway. It returns nil when the gateway
// does not exist or its class does not name controller, gatewire's
// controller name (see pkg/gatewayclass): then it has no outputs. It builds
// everything anew; a [Translator] reuses what did not change, with the
// same result.
func Translate(idx *resources.Index, controller string, gateway types.NamespacedName) *Result {
	res, _ := run(idx, controller, gateway, nil)
	return res
}

// run runs a whole translation, and returns it with its result.
func run(idx *resources.Index, controller string, gateway types.NamespacedName, memo *gatewayMemo) (*Result, *translation) {
	gw := idx.Gateway(gateway)
	if gw == nil || !ours(idx.GatewayClass(string(gw.Spec.GatewayClassName)), controller) {
		return nil, nil
	}
	var ctx *gatewayCtx
	if memo != nil {
		ctx = memo.context(controller, gateway, gw)
	} else {
		ctx = buildContext(idx, controller, gateway, gw)
	}
	t := &translation{
		gatewayCtx: ctx,
		idx:        idx,
		memo:       memo,
		ports:      map[uint32]*port{},
		udpPorts:   map[uint32]*port{},
		backends:   map[string]*irv1.Backend{},
		attached:   map[*listener]int32{},
	}
	t.l4 = &routeBuilder{gatewayCtx: ctx, idx: idx, resolved: map[string]resolved{}}
	t.hasPolicies = idx.HasBackendTLSPolicies()
	t.openPorts(t.allListeners())
	for _, p := range processors {
		p(t)
	}
	return t.result(), t
}

// result assembles the outputs of a finished translation.
func (t *translation) result() *Result {
	ir := &irv1.Gateway{Namespace: t.name.Namespace, Name: t.name.Name}
	var hosts map[string]map[string]builtHost
	if t.memo != nil {
		hosts = map[string]map[string]builtHost{}
	}
	for _, p := range t.servedPorts() {
		var prev, next map[string]builtHost
		if t.memo != nil {
			next = map[string]builtHost{}
			prev, hosts[p.ir.Name] = t.memo.hosts[p.ir.Name], next
		}
		ir.Listeners = append(ir.Listeners, p.build(prev, next))
	}
	if t.memo != nil {
		t.memo.hosts = hosts
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
