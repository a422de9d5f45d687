package gatewayapi

import (
	"cmp"
	"slices"
	"strings"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// l4Route is a TLSRoute, TCPRoute or UDPRoute as the L4 processors see it.
// They forward whole connections (or datagrams), so a route's rules have
// nothing to choose between: the backendRefs of all its rules (one in v1;
// older versions allowed more) share its traffic by weight.
type l4Route struct {
	kind      string
	meta      *metav1.ObjectMeta
	parents   []gatewayv1.ParentReference
	hostnames []string                 // TLSRoute only: the SNI names
	rules     [][]gatewayv1.BackendRef // the backendRefs of each rule
	// badHostname is why a hostname is not valid: the route is accepted
	// nowhere.
	badHostname *problem
}

// l4Entry is one L4 route placed on an IR listener, with what its
// precedence needs.
type l4Entry struct {
	route   *irv1.L4Route
	created time.Time
}

// l4Placement collects the L4 routes of one kind by IR listener and by
// where they go on it: the TLS routes of a TLS listener (chosen by SNI),
// or the L4 routes of a TCP or UDP one.
type l4Placement map[placementKey][]l4Entry

type placementKey struct {
	p   *port
	tls bool
}

// processTCPRoutes attaches the TCPRoutes that name the gateway.
func processTCPRoutes(t *translation) {
	placed := l4Placement{}
	routes := t.idx.TCPRoutesFor(t.name)
	t.hasL4 = t.hasL4 || len(routes) > 0
	for _, r := range routes {
		rules := make([][]gatewayv1.BackendRef, len(r.Spec.Rules))
		for i, rule := range r.Spec.Rules {
			rules[i] = rule.BackendRefs
		}
		t.attachL4(&l4Route{kind: resources.KindTCPRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, rules: rules}, placed)
	}
	placed.finish(func(p *port, tls bool, rs []*irv1.L4Route) {
		if tls {
			p.ir.TlsRoutes = append(p.ir.TlsRoutes, rs...)
			return
		}
		p.ir.L4Routes = rs
	})
}

// processUDPRoutes attaches the UDPRoutes that name the gateway.
func processUDPRoutes(t *translation) {
	placed := l4Placement{}
	routes := t.idx.UDPRoutesFor(t.name)
	t.hasL4 = t.hasL4 || len(routes) > 0
	for _, r := range routes {
		rules := make([][]gatewayv1.BackendRef, len(r.Spec.Rules))
		for i, rule := range r.Spec.Rules {
			rules[i] = rule.BackendRefs
		}
		t.attachL4(&l4Route{kind: resources.KindUDPRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs, rules: rules}, placed)
	}
	placed.finish(func(p *port, _ bool, rs []*irv1.L4Route) { p.ir.L4Routes = rs })
}

// attachL4 attaches an L4 route to the listeners its parentRefs select and
// records its status. Every route that attaches is Accepted and counted;
// on a TCP or UDP listener only the oldest is served (see the IR).
func (t *translation) attachL4(r *l4Route, placed l4Placement) {
	shares := t.l4.l4Backends(r, backendUses[r.kind])
	kind := busv1.RouteGroupKind{Group: gatewayv1.GroupName, Kind: r.kind}
	status := &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, r.kind, r.meta.Namespace, r.meta.Name),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: r.meta.Generation,
	}
	counted := map[*listener]bool{}
	seen := map[string]bool{}
	for _, ref := range r.parents {
		key := parentKey(parentRef(ref))
		if !t.l4.names(r.meta.Namespace, ref) || seen[key] {
			continue // another gateway's, or a repeated parentRef: one status entry each
		}
		seen[key] = true
		attached, p := t.l4.selectListeners(ref, &kind, r.meta.Namespace, r.hostnames)
		p = cmpProblem(p, r.badHostname)
		var cs conditions
		if p != nil {
			cs.set(string(gatewayv1.RouteConditionAccepted), false, p.reason, p.message)
		} else {
			cs.set(string(gatewayv1.RouteConditionAccepted), true, string(gatewayv1.RouteReasonAccepted), "Route is accepted")
			t.placeL4(r, attached, shares, counted, placed)
		}
		if shares.unresolved != nil {
			cs.set(string(gatewayv1.RouteConditionResolvedRefs), false, shares.unresolved.reason, shares.unresolved.message)
		} else {
			cs.set(string(gatewayv1.RouteConditionResolvedRefs), true, string(gatewayv1.RouteReasonResolvedRefs), "All references are resolved")
		}
		status.Parents = append(status.Parents, &busv1.RouteParentStatus{
			ParentRef:      parentRef(ref),
			ControllerName: t.controller,
			Conditions:     cs.stamp(r.meta.Generation),
		})
	}
	t.routeStatuses = append(t.routeStatuses, status)
}

// placeL4 adds an IR L4 route for each attachment to the IR listener of its
// port, once per port (and, on TLS listeners, per set of certificates that
// terminate TLS), and counts the route once per listener. A route on a
// listener that terminates TLS forwards to backends of its own (see
// terminatedTLS), with the listener's certificates. On a TLS listener the
// route is chosen by SNI: a TLSRoute's hostnames, or for a TCPRoute (on a
// listener in mode Terminate) the listener's hostname; TCPRoutes follow
// the TLSRoutes of the port.
func (t *translation) placeL4(r *l4Route, attached []attachment, shares *l4Shares, counted map[*listener]bool, placed l4Placement) {
	type key struct {
		p     *port
		certs string
	}
	byKey := map[key]*irv1.L4Route{}
	for _, a := range attached {
		if !counted[a.listener] {
			counted[a.listener] = true
			t.attached[a.listener]++
		}
		p := t.portOf(a.listener)
		hostnames := t.isolate(p, a.listener, a.hostnames)
		tls := a.listener.spec.Protocol == gatewayv1.TLSProtocolType
		if tls && len(hostnames) == 0 || !a.listener.programmed() {
			continue
		}
		use := shares
		if a.listener.terminates {
			use = t.l4.l4Backends(r, terminatedTLS)
		}
		k := key{p, strings.Join(a.listener.certificates, ",")}
		ir := byKey[k]
		if ir == nil {
			for _, b := range use.used {
				t.backends[b.Name] = b
			}
			ir = &irv1.L4Route{
				Name:     r.meta.Namespace + "/" + r.meta.Name,
				Source:   &irv1.RouteSource{Kind: r.kind, Namespace: r.meta.Namespace, Name: r.meta.Name},
				Backends: use.weighted,
				Secrets:  a.listener.certificates,
			}
			byKey[k] = ir
			pk := placementKey{p, tls}
			placed[pk] = append(placed[pk], l4Entry{route: ir, created: r.meta.CreationTimestamp.Time})
		}
		if tls {
			for _, h := range hostnames {
				if !contains(ir.Hostnames, h) {
					ir.Hostnames = append(ir.Hostnames, h)
				}
			}
		}
	}
}

// portOf returns the IR listener a ready listener is on.
func (t *translation) portOf(l *listener) *port {
	if l.proto.udp {
		return t.udpPorts[uint32(l.spec.Port)]
	}
	return t.ports[uint32(l.spec.Port)]
}

// l4Shares is the translation of the backendRefs of an L4 route for one
// use of its backends.
type l4Shares struct {
	// weighted are the shares of traffic; the share of references that
	// cannot be resolved has an empty backend name: those connections are
	// refused.
	weighted []*irv1.WeightedBackend
	// used are the resolved backends with traffic.
	used []*irv1.Backend
	// unresolved is the first reference that cannot be resolved.
	unresolved *problem
}

// l4Backends translates the backendRefs of an L4 route into weighted
// shares, merging references to the same backend.
func (t *routeBuilder) l4Backends(r *l4Route, use backendUse) *l4Shares {
	out := &l4Shares{}
	from := routeFrom(r.kind, r.meta.Namespace)
	for i, refs := range r.rules {
		for j, ref := range refs {
			b, p := t.resolveBackendAs(from, ref.BackendObjectReference, use)
			if p != nil && out.unresolved == nil {
				out.unresolved = within(p, fieldf("rules[%d].backendRefs[%d]", i, j))
			}
			weight := uint32(1)
			if ref.Weight != nil {
				weight = uint32(max(*ref.Weight, 0))
			}
			if weight == 0 {
				continue
			}
			name := ""
			if p == nil {
				name = b.Name
			}
			if k := slices.IndexFunc(out.weighted, func(w *irv1.WeightedBackend) bool { return w.Backend == name }); k >= 0 {
				out.weighted[k].Weight += weight
				continue
			}
			out.weighted = append(out.weighted, &irv1.WeightedBackend{Backend: name, Weight: weight})
			if p == nil {
				out.used = append(out.used, b)
			}
		}
	}
	return out
}

// finish sorts the routes of each IR listener, oldest first, then by
// namespace and name, and hands them to set.
func (placed l4Placement) finish(set func(p *port, tls bool, rs []*irv1.L4Route)) {
	for k, entries := range placed {
		slices.SortFunc(entries, func(a, b l4Entry) int {
			return cmp.Or(a.created.Compare(b.created),
				cmp.Compare(a.route.Source.Namespace, b.route.Source.Namespace),
				cmp.Compare(a.route.Source.Name, b.route.Source.Name))
		})
		routes := make([]*irv1.L4Route, len(entries))
		for i, e := range entries {
			routes[i] = e.route
		}
		set(k.p, k.tls, routes)
	}
}
