package gatewayapi

import (
	"fmt"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// processHTTPRoutes attaches the HTTPRoutes whose parentRefs name the
// gateway and records the status of each.
func processHTTPRoutes(t *translation) {
	for _, route := range t.idx.HTTPRoutesFor(t.name) {
		t.place(t.unit(resources.KindHTTPRoute, &route.ObjectMeta, func(b *routeBuilder) *routeUnit {
			return b.attachRoute(resources.KindHTTPRoute, &route.ObjectMeta, route.Spec.ParentRefs, route.Spec.Hostnames, b.buildHTTPRules(route))
		}))
	}
}

// attachment is where one parentRef of a route attaches: listeners and, for
// each, the hostnames the route gets there.
type attachment struct {
	listener  *listener
	hostnames []string
}

// attachRoute attaches an HTTPRoute or a GRPCRoute of kind, whose rules
// are translated, to the listeners each of its parentRefs to the gateway
// selects, and returns it with its status: one entry per parentRef.
func (t *routeBuilder) attachRoute(kind string, route *metav1.ObjectMeta, parents []gatewayv1.ParentReference, hosts []gatewayv1.Hostname, rules *httpRules) *routeUnit {
	hostnames, badHostname := routeHostnames(hosts)
	groupKind := busv1.RouteGroupKind{Group: gatewayv1.GroupName, Kind: kind}
	u := &routeUnit{kind: kind, meta: route, rules: rules, status: &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, kind, route.Namespace, route.Name),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: route.Generation,
	}}
	seen := map[string]bool{}
	for _, ref := range parents {
		key := parentKey(parentRef(ref))
		if !t.names(route.Namespace, ref) || seen[key] {
			continue // another gateway's, or a repeated parentRef: one status entry each
		}
		seen[key] = true
		attached, p := t.selectListeners(ref, &groupKind, route.Namespace, hostnames)
		if p == nil {
			attached, p = t.withoutKindConflicts(kind, route, attached)
		}
		p = cmpProblem(p, badHostname, rules.notAccepted())
		var cs conditions
		if p != nil {
			cs.set(string(gatewayv1.RouteConditionAccepted), false, p.reason, p.message)
		} else {
			cs.set(string(gatewayv1.RouteConditionAccepted), true, string(gatewayv1.RouteReasonAccepted), "Route is accepted")
			u.attached = append(u.attached, attached...)
		}
		rules.setConditions(&cs, p == nil)
		u.status.Parents = append(u.status.Parents, &busv1.RouteParentStatus{
			ParentRef:      parentRef(ref),
			ControllerName: t.controller,
			Conditions:     cs.stamp(route.Generation),
		})
	}
	return u
}

// routeHostnames returns the hostnames of a route, or the problem with
// the first that is not a valid hostname (lower-case, an optional "*."
// wildcard label first): such a route is not Accepted.
func routeHostnames(hs []gatewayv1.Hostname) ([]string, *problem) {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = string(h)
		if len(h) > 253 || !isRouteHostname(string(h)) {
			return out, unsupported("hostnames[%d]: %q is not a valid hostname", i, h)
		}
	}
	return out, nil
}

// names reports whether ref, from a route in namespace ns, names the
// translated gateway or one of its ListenerSets.
func (t *routeBuilder) names(ns string, ref gatewayv1.ParentReference) bool {
	return t.isParent(ns, ref)
}

// selectListeners returns the listeners ref selects that admit a route of
// kind from namespace ns with hostnames, or the problem that keeps the route
// from attaching.
func (t *routeBuilder) selectListeners(ref gatewayv1.ParentReference, kind *busv1.RouteGroupKind, ns string, hostnames []string) ([]attachment, *problem) {
	var named, admitting []*listener
	candidates, p := t.parentListeners(ns, ref)
	if p != nil {
		return nil, p
	}
	for _, l := range candidates {
		if (ref.SectionName == nil || *ref.SectionName == l.spec.Name) && (ref.Port == nil || *ref.Port == l.spec.Port) {
			named = append(named, l)
		}
	}
	if len(named) == 0 {
		return nil, &problem{string(gatewayv1.RouteReasonNoMatchingParent), noListener(parentName(ns, ref), ref)}
	}
	var notReady []string
	var ready []*listener
	for _, l := range named {
		switch {
		case !l.ready():
			notReady = append(notReady, string(l.spec.Name))
		case admitsKind(l, kind) && l.admits(t.idx, ns):
			admitting = append(admitting, l)
		default:
			ready = append(ready, l)
		}
	}
	if len(admitting) == 0 && len(notReady) == len(named) {
		return nil, &problem{string(gatewayv1.RouteReasonNotAllowedByListeners),
			fmt.Sprintf("listeners %s are not valid", quoteJoin(notReady))}
	}
	if len(admitting) == 0 {
		return nil, &problem{string(gatewayv1.RouteReasonNotAllowedByListeners), notAllowed(parentName(ns, ref), ready, kind, ns)}
	}
	var out []attachment
	for _, l := range admitting {
		if hs := intersect(l.hostname, hostnames); len(hs) > 0 {
			out = append(out, attachment{listener: l, hostnames: hs})
		}
	}
	if len(out) == 0 {
		return nil, &problem{string(gatewayv1.RouteReasonNoMatchingListenerHostname),
			"no listener hostname matches the route's hostnames"}
	}
	return out, nil
}

// noListener says that parent, named by parentName, has no listener that
// the sectionName and port of ref select.
func noListener(parent string, ref gatewayv1.ParentReference) string {
	switch {
	case ref.SectionName != nil && ref.Port != nil:
		return fmt.Sprintf("%s has no listener %q on port %d", parent, *ref.SectionName, *ref.Port)
	case ref.SectionName != nil:
		return fmt.Sprintf("%s has no listener %q", parent, *ref.SectionName)
	case ref.Port != nil:
		return fmt.Sprintf("%s has no listener on port %d", parent, *ref.Port)
	}
	return parent + " has no listeners"
}

// notAllowed says why none of the ready listeners ls of parent admits a
// route of kind from namespace ns: the route kind when none of them allows
// it, else the namespace.
func notAllowed(parent string, ls []*listener, kind *busv1.RouteGroupKind, ns string) string {
	var allowed []string
	for _, l := range ls {
		if admitsKind(l, kind) {
			return fmt.Sprintf("no listener of %s admits %s routes from namespace %q", parent, kind.Kind, ns)
		}
		for _, k := range l.kinds {
			if !contains(allowed, k.Kind) {
				allowed = append(allowed, k.Kind)
			}
		}
	}
	which, they := "listener", "it allows"
	if len(ls) > 1 {
		which, they = "listeners", "they allow"
	}
	if len(allowed) == 0 {
		allowed = []string{"no route kinds"}
	}
	return fmt.Sprintf("route kind %s is not allowed by %s %s of %s (%s %s)",
		kind.Kind, which, quoteJoin(names(ls)), parent, they, strings.Join(allowed, ", "))
}

func admitsKind(l *listener, kind *busv1.RouteGroupKind) bool {
	for _, k := range l.kinds {
		if k.Group == kind.Group && k.Kind == kind.Kind {
			return true
		}
	}
	return false
}

// place adds a route's IR routes to the virtual hosts of its attachments
// and its backends to the gateway, counts it once on each listener, and
// records its status. A backend several routes use is one backend: it
// speaks HTTP/2 when one of them, a GRPCRoute, needs it.
func (t *translation) place(u *routeUnit) {
	t.routeStatuses = append(t.routeStatuses, u.status)
	if len(u.attached) == 0 {
		return
	}
	for _, b := range u.rules.backends {
		if old := t.backends[b.Name]; old == nil || b.Protocol == irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2 && old.Protocol != b.Protocol {
			t.backends[b.Name] = b
		}
	}
	counted := map[*listener]bool{}
	for _, a := range u.attached {
		if !counted[a.listener] {
			counted[a.listener] = true
			t.attached[a.listener]++
		}
		p := t.ports[uint32(a.listener.spec.Port)]
		for _, h := range a.hostnames {
			p.add(a.listener, h, u.rules.routes, u.meta.CreationTimestamp.Time)
		}
	}
}

// parentKey identifies a parentRef as written.
func parentKey(r *busv1.ParentRef) string {
	return fmt.Sprintf("%s/%s/%s/%s/%s/%d", r.Group, r.Kind, r.Namespace, r.Name, r.SectionName, r.Port)
}

// parentRef mirrors a parentRef as written, for the route's status.
func parentRef(ref gatewayv1.ParentReference) *busv1.ParentRef {
	out := &busv1.ParentRef{Name: string(ref.Name)}
	if ref.Group != nil {
		out.Group = string(*ref.Group)
	}
	if ref.Kind != nil {
		out.Kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		out.Namespace = string(*ref.Namespace)
	}
	if ref.SectionName != nil {
		out.SectionName = string(*ref.SectionName)
	}
	if ref.Port != nil {
		out.Port = uint32(*ref.Port)
	}
	return out
}
