package gatewayapi

import (
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// processTLSRoutes attaches the TLSRoutes that name the gateway: TLS
// passthrough by SNI on TLS listeners.
func processTLSRoutes(t *translation) {
	placed := l4Placement{}
	routes := t.idx.TLSRoutesFor(t.name)
	t.hasL4 = t.hasL4 || len(routes) > 0
	for _, r := range routes {
		rules := make([][]gatewayv1.BackendRef, len(r.Spec.Rules))
		for i, rule := range r.Spec.Rules {
			rules[i] = rule.BackendRefs
		}
		hostnames, bad := routeHostnames(r.Spec.Hostnames)
		t.attachL4(&l4Route{kind: resources.KindTLSRoute, meta: &r.ObjectMeta, parents: r.Spec.ParentRefs,
			hostnames: hostnames, badHostname: bad, rules: rules}, placed)
	}
	placed.finish(func(p *port, _ bool, rs []*irv1.L4Route) { p.ir.TlsRoutes = rs })
}

// isolate returns the hostnames, among those a route gets on listener l,
// for which l is the most specific programmed listener of its port that
// matches: the others belong to another listener (listener isolation). It
// applies to SNI names of TLS passthrough; HTTP routes are isolated by
// virtual host. Other listeners keep their hostnames.
func (t *translation) isolate(p *port, l *listener, hostnames []string) []string {
	if l.spec.Protocol != gatewayv1.TLSProtocolType {
		return hostnames
	}
	var out []string
	for _, h := range hostnames {
		if t.mostSpecific(p, h) == l {
			out = append(out, h)
		}
	}
	return out
}

// mostSpecific returns the programmed TCP-transport listener of port p
// whose hostname matches hostname best: the same name, else the longest
// wildcard, else one with no hostname.
func (t *translation) mostSpecific(p *port, hostname string) *listener {
	var best *listener
	bestRank := -1
	for _, l := range t.allListeners() {
		if !l.programmed() || l.proto.udp || uint32(l.spec.Port) != p.ir.Port {
			continue
		}
		rank := -1
		switch {
		case l.hostname == hostname:
			rank = 1 << 20
		case wildcardMatches(l.hostname, hostname):
			rank = len(l.hostname)
		case l.hostname == "":
			rank = 0
		}
		if rank > bestRank {
			best, bestRank = l, rank
		}
	}
	return best
}
