package gatewayapi

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// The patch: when only HTTPRoutes, and objects that only routes depend on,
// changed since a gateway's last translation, the Translator does not walk
// the gateway again. It builds the units of the routes the changes touch
// (the changed routes, and the units that read a changed object), and
// patches the last translation with them: their statuses, the backends
// they use, the entries of their listeners' hostnames, and the virtual
// hosts of the hostnames those entries cover. Its cost is that of the
// change, not of the gateway. A change the patch cannot follow (of the
// Gateway's listeners, ListenerSets, GRPCRoutes and their kind conflicts,
// TLS, TCP and UDP routes, BackendTLSPolicies) makes a whole translation;
// both give the same result (see the property test).

// patchable are the kinds of changed objects a patch follows; anything
// else, and any change of the gateway's context, makes a whole translation.
var patchable = map[string]bool{
	resources.KindHTTPRoute:      true,
	resources.KindService:        true,
	resources.KindEndpointSlice:  true,
	resources.KindReferenceGrant: true,
	resources.KindNamespace:      true,
	resources.KindSecret:         true,
	resources.KindConfigMap:      true,
}

// patchState is what a patch needs of the last translation, kept by the
// gatewayMemo after each one.
type patchState struct {
	t *translation
	// refs counts, for each backend name, the placed units that use it.
	refs map[string]int
	// statuses are the placed units' statuses, sorted like the result's.
	statuses []*busv1.Status
	// byCell lists the units that recorded each revision cell.
	byCell map[*uint64][]unitKey
	result *Result
}

// canPatch reports whether the gateway's last translation can be patched:
// there is one, and the gateway has none of what a patch cannot follow.
func canPatch(t *translation) bool {
	return len(t.kindRejected) == 0 && !t.hasGRPC && !t.hasL4 && !t.hasPolicies
}

// keep records, after a whole translation, what a patch needs.
func (m *gatewayMemo) keep(t *translation, res *Result) {
	m.patch = nil
	if !canPatch(t) {
		return
	}
	ps := &patchState{t: t, refs: map[string]int{}, byCell: map[*uint64][]unitKey{}, result: res}
	for k := range m.seen {
		u := m.units[k]
		ps.index(k, u)
		if len(u.attached) > 0 {
			for _, name := range backendNames(u) {
				ps.refs[name]++
			}
		}
		ps.statuses = append(ps.statuses, u.status)
	}
	slices.SortFunc(ps.statuses, compareStatus)
	m.patch = ps
}

func (ps *patchState) index(k unitKey, u *routeUnit) {
	for _, c := range u.deps.Cells() {
		ps.byCell[c] = append(ps.byCell[c], k)
	}
}

// backendNames are the names of the backends a unit uses, each once.
func backendNames(u *routeUnit) []string {
	var out []string
	for _, b := range u.rules.backends {
		if !slices.Contains(out, b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}

// patched returns the gateway's translation by patching the last one with
// changes, or false when it cannot.
func (m *gatewayMemo) patched(gw types.NamespacedName, ch *resources.Changes) (*Result, bool) {
	ps := m.patch
	if ps == nil {
		return nil, false
	}
	dirty := map[unitKey]bool{}
	for _, o := range ch.Objects {
		if !patchable[o.Kind] {
			return nil, false
		}
		if o.Kind == resources.KindHTTPRoute {
			dirty[unitKey{kind: o.Kind, nn: o.NamespacedName}] = true
		}
	}
	for _, c := range ch.Cells() {
		for _, k := range ps.byCell[c] {
			dirty[k] = true
		}
	}
	if len(dirty) == 0 {
		return ps.result, true
	}
	t := ps.t
	touched := map[*port]map[string]bool{}
	backends := map[string]bool{}
	built := 0
	for k := range dirty {
		old := m.units[k]
		if old != nil && old.deps.Unchanged() {
			continue // it read nothing that changed
		}
		nu := m.buildUnit(t, k)
		if old == nil && nu == nil {
			continue
		}
		built++
		ps.replace(t, old, nu, touched, backends)
		if nu == nil {
			delete(m.units, k)
		} else {
			m.units[k] = nu
			ps.index(k, nu)
		}
	}
	res := ps.rebuild(t, touched, backends)
	res.RoutesBuilt, res.Patched = built, true
	ps.result = res
	return res, true
}

// buildUnit builds the unit of HTTPRoute k, or returns nil when it does
// not name the gateway (any more).
func (m *gatewayMemo) buildUnit(t *translation, k unitKey) *routeUnit {
	route := m.index.HTTPRoute(k.nn)
	if route == nil {
		return nil
	}
	b := &routeBuilder{gatewayCtx: t.gatewayCtx, idx: m.index, resolved: map[string]resolved{}}
	if !slices.ContainsFunc(route.Spec.ParentRefs, func(ref gatewayv1.ParentReference) bool { return b.names(route.Namespace, ref) }) {
		return nil
	}
	deps := resources.Deps{}
	view := m.index.View(&deps)
	view.Route(k.kind, k.nn)
	b.idx = view
	u := b.attachRoute(resources.KindHTTPRoute, &route.ObjectMeta, route.Spec.ParentRefs, route.Spec.Hostnames, b.buildHTTPRules(route))
	u.deps, u.ctx = deps, t.gatewayCtx
	return u
}

// replace takes old's place in the translation (routes, backends, counts,
// status) and gives it to nu; either may be nil. The hostnames whose
// entries changed are added to touched, the backends to backends.
func (ps *patchState) replace(t *translation, old, nu *routeUnit, touched map[*port]map[string]bool, backends map[string]bool) {
	if old != nil {
		ps.dropStatus(old.status)
		ps.unplace(t, old, touched, backends)
	}
	if nu != nil {
		ps.addStatus(nu.status)
		before := len(t.routeStatuses)
		t.place(nu)
		t.routeStatuses = t.routeStatuses[:before]
		for _, a := range nu.attached {
			mark(touched, t.ports[uint32(a.listener.spec.Port)], a.hostnames)
		}
		if len(nu.attached) > 0 {
			for _, b := range nu.rules.backends {
				t.backends[b.Name] = b
			}
			for _, name := range backendNames(nu) {
				ps.refs[name]++
				backends[name] = true
			}
		}
	}
}

func mark(touched map[*port]map[string]bool, p *port, hostnames []string) {
	if touched[p] == nil {
		touched[p] = map[string]bool{}
	}
	for _, h := range hostnames {
		touched[p][h] = true
	}
}

// unplace takes a unit out of the translation.
func (ps *patchState) unplace(t *translation, u *routeUnit, touched map[*port]map[string]bool, backends map[string]bool) {
	if len(u.attached) == 0 {
		return
	}
	counted := map[*listener]bool{}
	mine := map[*irv1.Route]bool{}
	for _, r := range u.rules.routes {
		mine[r] = true
	}
	for _, a := range u.attached {
		if !counted[a.listener] {
			counted[a.listener] = true
			t.attached[a.listener]--
		}
		p := t.ports[uint32(a.listener.spec.Port)]
		mark(touched, p, a.hostnames)
		byHost := p.routes[a.listener]
		for _, h := range a.hostnames {
			byHost[h] = slices.DeleteFunc(byHost[h], func(e entry) bool { return mine[e.route] })
			if len(byHost[h]) == 0 {
				delete(byHost, h)
			}
		}
	}
	// A backend another unit still uses stays: every unit that uses it
	// holds the same backend, as they read the same objects, and when
	// those changed every unit that read them is built again and puts its
	// own in place.
	for _, name := range backendNames(u) {
		backends[name] = true
		if ps.refs[name]--; ps.refs[name] <= 0 {
			delete(ps.refs, name)
			delete(t.backends, name)
		}
	}
}

func (ps *patchState) dropStatus(s *busv1.Status) {
	i, ok := slices.BinarySearchFunc(ps.statuses, s, compareStatus)
	if ok {
		ps.statuses = slices.Delete(ps.statuses, i, i+1)
	}
}

func (ps *patchState) addStatus(s *busv1.Status) {
	i, _ := slices.BinarySearchFunc(ps.statuses, s, compareStatus)
	ps.statuses = slices.Insert(ps.statuses, i, s)
}

// compareStatus orders statuses by kind, namespace and name.
func compareStatus(a, b *busv1.Status) int {
	return cmp.Or(cmp.Compare(a.Object.Kind, b.Object.Kind),
		cmp.Compare(a.Object.Namespace, b.Object.Namespace),
		cmp.Compare(a.Object.Name, b.Object.Name))
}

// rebuild makes the result of the patched translation: the virtual hosts
// of the touched hostnames again, and the rest as it was.
func (ps *patchState) rebuild(t *translation, touched map[*port]map[string]bool, backends map[string]bool) *Result {
	last := ps.result.IR
	ir := &irv1.Gateway{Namespace: last.Namespace, Name: last.Name, Secrets: last.Secrets}
	ir.Listeners = slices.Clone(last.Listeners)
	for p, hosts := range touched {
		i := slices.IndexFunc(ir.Listeners, func(l *irv1.Listener) bool { return l.Name == p.ir.Name })
		if i < 0 {
			continue // a port that serves nothing
		}
		ir.Listeners[i] = ps.rebuildPort(t, p, hosts)
	}
	ir.Backends = backendList(t, last.Backends, backends)
	t.gatewayConditions = nil
	t.routeStatuses = nil
	processGateway(t)
	processListenerSetStatus(t)
	statuses := mergeStatuses([]*busv1.Status{t.gatewayStatus()}, ps.statuses, t.routeStatuses)
	return &Result{IR: ir, Statuses: statuses, Proxy: proxyFor(t.gateway, ir)}
}

// rebuildPort builds the virtual hosts of the domains hosts cover on p
// again, in a copy of its IR listener.
func (ps *patchState) rebuildPort(t *translation, p *port, hosts map[string]bool) *irv1.Listener {
	prev := t.memo.hosts[p.ir.Name]
	l := &irv1.Listener{Name: p.ir.Name, Port: p.ir.Port, Protocol: p.ir.Protocol, GatewayListeners: p.ir.GatewayListeners,
		Tls: p.ir.Tls, TlsRoutes: p.ir.TlsRoutes, L4Routes: p.ir.L4Routes, VirtualHosts: slices.Clone(p.ir.VirtualHosts)}
	for h := range hosts {
		for _, byHost := range p.routes {
			slices.SortFunc(byHost[h], comparePrecedence)
		}
	}
	for _, d := range affectedDomains(p, prev, hosts) {
		b, ok := p.host(d, prev[d])
		if ok && !p.names(d) {
			ok = false
		}
		i, found := slices.BinarySearchFunc(l.VirtualHosts, d, func(vh *irv1.VirtualHost, d string) int { return compareDomains(vh.GetName(), d) })
		switch {
		case ok && found:
			l.VirtualHosts[i] = b.vh
			prev[d] = b
		case ok:
			l.VirtualHosts = slices.Insert(l.VirtualHosts, i, b.vh)
			prev[d] = b
		case found:
			l.VirtualHosts = slices.Delete(l.VirtualHosts, i, i+1)
			delete(prev, d)
		}
	}
	p.ir = l
	return l
}

// names reports whether domain d is a hostname of a listener or route of
// the port.
func (p *port) names(d string) bool {
	for _, l := range p.listeners {
		if l.hostname == d {
			return true
		}
	}
	for _, byHost := range p.routes {
		if len(byHost[d]) > 0 {
			return true
		}
	}
	return false
}

// affectedDomains are the domains whose virtual hosts the touched hostnames
// may change: each of them, and, for a wildcard, every domain it covers.
func affectedDomains(p *port, prev map[string]builtHost, hosts map[string]bool) []string {
	out := make([]string, 0, len(hosts))
	seen := map[string]bool{}
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for h := range hosts {
		add(h)
		if h != "*" && !strings.HasPrefix(h, "*.") {
			continue
		}
		for d := range prev {
			if h == "*" || wildcardMatches(h, d) {
				add(d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// compareDomains orders virtual hosts as port.domains does: by name, "*"
// last.
func compareDomains(a, b string) int {
	return cmp.Or(cmp.Compare(boolRank(a == "*"), boolRank(b == "*")), cmp.Compare(a, b))
}

// backendList is last, the sorted backends of the last translation, with
// the backends of the names that changed as the translation has them now.
// A backend built again the same as it was is the last one: what is made of
// it downstream (its cluster and load assignment, its bytes in the IR) is
// reused, and when no backend changed, last itself is the list.
func backendList(t *translation, last []*irv1.Backend, changed map[string]bool) []*irv1.Backend {
	find := func(list []*irv1.Backend, name string) (int, bool) {
		return slices.BinarySearchFunc(list, name, func(b *irv1.Backend, name string) int { return cmp.Compare(b.Name, name) })
	}
	same := func(name string) bool {
		i, found := find(last, name)
		b := t.backends[name]
		return found == (b != nil) && (!found || last[i] == b || proto.Equal(last[i], b))
	}
	var out []*irv1.Backend
	for name := range changed {
		if same(name) {
			continue
		}
		if out == nil {
			out = slices.Clone(last)
		}
		i, found := find(out, name)
		b := t.backends[name]
		switch {
		case b != nil && found:
			out[i] = b
		case b != nil:
			out = slices.Insert(out, i, b)
		case found:
			out = slices.Delete(out, i, i+1)
		}
	}
	if out == nil {
		return last
	}
	return out
}

// mergeStatuses appends to head the merge of two lists sorted by
// compareStatus, a's first of equal ones. b is short (the statuses of the
// routes a patch rebuilt) and a long (every other route's): each of b's
// goes where a binary search of a puts it, so that the statuses of a are
// not read one by one.
func mergeStatuses(head, a, b []*busv1.Status) []*busv1.Status {
	out := slices.Grow(head, len(a)+len(b))
	for _, s := range b {
		i := sort.Search(len(a), func(i int) bool { return compareStatus(a[i], s) > 0 })
		out = append(append(out, a[:i]...), s)
		a = a[i:]
	}
	return append(out, a...)
}
