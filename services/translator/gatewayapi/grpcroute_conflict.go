package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// reasonHostnameConflict is the reason of a route's Accepted False on a
// listener where a route of the other kind (HTTPRoute or GRPCRoute) took
// the hostnames they share; the spec names none.
const reasonHostnameConflict = "HostnameConflict"

// routeOnListener names one route on one listener.
type routeOnListener struct {
	kind, namespace, name string
	listener              *listener
}

// kindCandidate is a route that would attach to a listener with hostnames.
type kindCandidate struct {
	routeOnListener
	created   time.Time
	hostnames []string
}

// processRouteKindConflicts decides, before HTTPRoutes and GRPCRoutes
// attach, which of them a listener must reject: when an HTTPRoute and a
// GRPCRoute would attach to one listener with intersecting hostnames, the
// spec accepts exactly one of them, the oldest, then the first by
// namespace and name. Routes are considered in that order; one is rejected
// on the listener when its hostnames intersect those of an accepted route
// of the other kind. It costs nothing on gateways without GRPCRoutes.
func processRouteKindConflicts(t *translation) {
	grpc := t.idx.GRPCRoutesFor(t.name)
	if len(grpc) == 0 {
		return
	}
	var candidates []kindCandidate
	for _, r := range t.idx.HTTPRoutesFor(t.name) {
		candidates = t.kindCandidates(candidates, resources.KindHTTPRoute, &r.ObjectMeta, r.Spec.ParentRefs, r.Spec.Hostnames)
	}
	for _, r := range grpc {
		candidates = t.kindCandidates(candidates, resources.KindGRPCRoute, &r.ObjectMeta, r.Spec.ParentRefs, r.Spec.Hostnames)
	}
	slices.SortStableFunc(candidates, func(a, b kindCandidate) int {
		return cmp.Or(a.created.Compare(b.created), cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	t.kindRejected = map[routeOnListener]*problem{}
	accepted := map[*listener][]kindCandidate{}
	for _, c := range candidates {
		if _, done := t.kindRejected[c.routeOnListener]; done {
			continue
		}
		if winner := intersecting(accepted[c.listener], c); winner != nil {
			t.kindRejected[c.routeOnListener] = &problem{reasonHostnameConflict, fmt.Sprintf(
				"%s %s/%s takes precedence (older, or first by name) on listener %q, where they share hostnames: an HTTPRoute and a GRPCRoute cannot share a hostname on a listener",
				winner.kind, winner.namespace, winner.name, winner.listener.spec.Name)}
			continue
		}
		accepted[c.listener] = append(accepted[c.listener], c)
	}
}

// kindCandidates adds the listeners a route's parentRefs would attach it
// to, with its hostnames there.
func (t *translation) kindCandidates(out []kindCandidate, kind string, meta *metav1.ObjectMeta, refs []gatewayv1.ParentReference, hosts []gatewayv1.Hostname) []kindCandidate {
	hostnames, bad := routeHostnames(hosts)
	if bad != nil {
		return out // not accepted anywhere
	}
	rgk := busv1.RouteGroupKind{Group: gatewayv1.GroupName, Kind: kind}
	for _, ref := range refs {
		if !t.l4.names(meta.Namespace, ref) {
			continue
		}
		attached, _ := t.l4.selectListeners(ref, &rgk, meta.Namespace, hostnames)
		for _, a := range attached {
			out = append(out, kindCandidate{
				routeOnListener: routeOnListener{kind: kind, namespace: meta.Namespace, name: meta.Name, listener: a.listener},
				created:         meta.CreationTimestamp.Time,
				hostnames:       a.hostnames,
			})
		}
	}
	return out
}

// intersecting returns the first of accepted, of the other kind than c,
// that shares a hostname with c, or nil.
func intersecting(accepted []kindCandidate, c kindCandidate) *kindCandidate {
	for i := range accepted {
		a := &accepted[i]
		if a.kind == c.kind {
			continue
		}
		for _, h := range c.hostnames {
			for _, o := range a.hostnames {
				if h == o || wildcardMatches(h, o) || wildcardMatches(o, h) || h == "*" || o == "*" {
					return a
				}
			}
		}
	}
	return nil
}

// withoutKindConflicts removes from attached the listeners where the route
// kind namespace/name lost its hostnames to a route of the other kind (see
// processRouteKindConflicts). When none is left, it returns the problem
// that keeps the route from being accepted.
func (t *routeBuilder) withoutKindConflicts(kind string, meta *metav1.ObjectMeta, attached []attachment) ([]attachment, *problem) {
	if len(t.kindRejected) == 0 || len(attached) == 0 {
		return attached, nil
	}
	var out []attachment
	var first *problem
	for _, a := range attached {
		p := t.kindRejected[routeOnListener{kind: kind, namespace: meta.Namespace, name: meta.Name, listener: a.listener}]
		if p == nil {
			out = append(out, a)
		} else if first == nil {
			first = p
		}
	}
	if len(out) == 0 {
		return nil, first
	}
	return out, nil
}
