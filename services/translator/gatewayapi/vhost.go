package gatewayapi

import (
	"cmp"
	"slices"
	"strings"
	"time"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// port is one IR listener being built: the Gateway listeners on one port and
// the routes attached to each, by effective hostname.
type port struct {
	ir        *irv1.Listener
	listeners []*listener
	routes    map[*listener]map[string][]entry
}

// entry is one route and what its precedence needs beyond its match.
type entry struct {
	route   *irv1.Route
	created time.Time
}

// add records routes, from a route object created at created, attached to
// listener l for hostname.
func (p *port) add(l *listener, hostname string, routes []*irv1.Route, created time.Time) {
	byHost := p.routes[l]
	if byHost == nil {
		byHost = map[string][]entry{}
		p.routes[l] = byHost
	}
	for _, r := range routes {
		byHost[hostname] = append(byHost[hostname], entry{route: r, created: created})
	}
}

// build returns the IR listener. It has a virtual host for every hostname a
// listener or a route names, sorted by hostname with "*" last. A request for
// a hostname is served by the most specific listener that matches it, so a
// virtual host holds only routes of that listener: first those for the
// exact hostname, then those of wildcards that cover it, most specific
// first, each group in match precedence order.
//
// A virtual host whose listener and routes are those of one in prev (the
// last build of the port, nil for none) is that one: unchanged virtual
// hosts keep their identity, so that what is made of them is not made
// again. next receives the virtual hosts built, by hostname.
func (p *port) build(prev, next map[string]builtHost) *irv1.Listener {
	for _, byHost := range p.routes {
		for _, entries := range byHost {
			slices.SortFunc(entries, comparePrecedence)
		}
	}
	domains := p.domains()
	p.ir.VirtualHosts = make([]*irv1.VirtualHost, 0, len(domains))
	for _, d := range domains {
		b, ok := p.host(d, prev[d])
		if !ok {
			continue
		}
		if next != nil {
			next[d] = b
		}
		p.ir.VirtualHosts = append(p.ir.VirtualHosts, b.vh)
	}
	return p.ir
}

// host builds the virtual host of domain d from the sorted routes of the
// port, or reuses prev's when it has the same listener and routes. It
// reports false when no listener of the port serves d.
func (p *port) host(d string, prev builtHost) (builtHost, bool) {
	l := p.listenerFor(d)
	if l == nil {
		return builtHost{}, false
	}
	var routes []*irv1.Route
	seen := map[string]struct{}{}
	for _, h := range coveringHostnames(d) {
		for _, e := range p.routes[l][h] {
			if _, dup := seen[e.route.Name]; !dup {
				seen[e.route.Name] = struct{}{}
				routes = append(routes, e.route)
			}
		}
	}
	vh := prev.vh
	if prev.listener != l || !slices.Equal(vh.GetRoutes(), routes) {
		vh = &irv1.VirtualHost{Name: d, Hostname: d, Routes: routes}
	}
	return builtHost{listener: l, vh: vh}, true
}

// builtHost is a virtual host a port built, and the listener it holds the
// routes of.
type builtHost struct {
	listener *listener
	vh       *irv1.VirtualHost
}

// domains returns every hostname of the port's listeners and routes, sorted,
// "*" last.
func (p *port) domains() []string {
	set := map[string]struct{}{}
	for _, l := range p.listeners {
		if l.hostname != "" {
			set[l.hostname] = struct{}{}
		}
	}
	for _, byHost := range p.routes {
		for h := range byHost {
			set[h] = struct{}{}
		}
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(boolRank(a == "*"), boolRank(b == "*")), cmp.Compare(a, b))
	})
	return out
}

// listenerFor returns the most specific listener of the port that matches
// hostname: the same hostname, else the longest wildcard, else one with no
// hostname.
func (p *port) listenerFor(hostname string) *listener {
	var best *listener
	rank := func(l *listener) int { // higher is more specific; -1 does not match
		switch {
		case l.hostname == hostname:
			return 1 << 20
		case wildcardMatches(l.hostname, hostname):
			return len(l.hostname)
		case l.hostname == "":
			return 0
		}
		return -1
	}
	for _, l := range p.listeners {
		if r := rank(l); r >= 0 && (best == nil || r > rank(best)) {
			best = l
		}
	}
	return best
}

// coveringHostnames returns hostname and every wildcard that covers it, most
// specific first, ending with "*": for "a.b.com", "a.b.com", "*.b.com",
// "*.com", "*".
func coveringHostnames(hostname string) []string {
	out := []string{hostname}
	rest := strings.TrimPrefix(hostname, "*.")
	for {
		_, after, ok := strings.Cut(rest, ".")
		if !ok {
			break
		}
		out = append(out, "*."+after)
		rest = after
	}
	if hostname != "*" {
		out = append(out, "*")
	}
	return out
}
