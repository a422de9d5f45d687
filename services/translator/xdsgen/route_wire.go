package xdsgen

import (
	"strings"
	"unicode/utf8"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// The virtual host of routes that only match paths and header values,
// modify headers and forward to backends (the common HTTPRoute) is written
// straight into protobuf's wire format, as [envoyRoutes] would build it
// (see wire.go for why and how it is checked). Each Envoy message below has
// a size function and an append function; the comments name the fields.
// proto's marshalling writes a message's fields in field-number order,
// but the set field of a oneof after the others.

// vhostWire is the encoding of a virtual host of simple routes and the
// clusters its routes name, or false when a route is not simple.
func vhostWire(vh *irv1.VirtualHost) ([]byte, []ref, bool) {
	if !useWire || vh.GetName() == "" || !clean(vh.GetName()) || !clean(vh.GetHostname()) {
		return nil, nil, false
	}
	size := sizeString(1, vh.GetName()) + sizeString(2, vh.GetHostname())
	routes := make([]wireRoute, 0, 2*len(vh.GetRoutes()))
	for _, r := range vh.GetRoutes() {
		if !simpleRoute(r) {
			return nil, nil, false
		}
		routes = appendWireRoutes(routes, r)
	}
	refs := make([]ref, 0, 2*len(routes))
	for i := range routes {
		w := &routes[i]
		w.sizes()
		size += sizeMessage(3, w.size)
		for _, b := range w.r.GetAction().GetBackends() {
			refs = append(refs, ref{resourcev3.ClusterType, b.GetBackend()})
		}
	}
	b := make([]byte, 0, size)
	b = appendString(b, 1, vh.GetName())     // VirtualHost.name
	b = appendString(b, 2, vh.GetHostname()) // VirtualHost.domains
	for i := range routes {
		b = appendMessageHead(b, 3, routes[i].size) // VirtualHost.routes
		b = routes[i].append(b)
	}
	return b, refs, true
}

// wireRoute is one Envoy route of an IR route: its name, what it matches
// the path with (a prefix, or the exact path), and the sizes of the Route
// and of its match and action.
type wireRoute struct {
	r                   *irv1.Route
	name, path          string
	exact               bool
	size, match, action int
}

// appendWireRoutes appends the Envoy routes of a simple route, as
// envoyRoutes and splitPrefix make them.
func appendWireRoutes(out []wireRoute, r *irv1.Route) []wireRoute {
	p := r.GetMatch().GetPath()
	if p.GetType() == irv1.PathMatch_TYPE_EXACT {
		return append(out, wireRoute{r: r, name: r.GetName(), path: p.GetValue(), exact: true})
	}
	prefix := strings.TrimRight(p.GetValue(), "/") + "/"
	w := wireRoute{r: r, name: r.GetName(), path: prefix}
	if prefix == "/" || r.GetAction().GetGrpc() {
		return append(out, w)
	}
	return append(out, wireRoute{r: r, name: r.GetName() + "/exact", path: prefix[:len(prefix)-1], exact: true}, w)
}

// simpleRoute reports whether a route takes the wire encoder: it forwards
// to named backends without per-backend header changes, matches its path
// by prefix or exactly and headers by value, and has no redirect, rewrite,
// mirror, CORS policy, timeout or retry; and every string in it is one
// ValidateAll and marshalling accept (TestSimpleRouteKnowsEveryField
// fails when the IR gains a field this does not look at).
func simpleRoute(r *irv1.Route) bool {
	a, m := r.GetAction(), r.GetMatch()
	rw := a.GetUrlRewrite()
	if len(a.GetBackends()) == 0 || a.GetRedirect() != nil || len(a.GetMirrors()) > 0 || a.GetCors() != nil ||
		a.GetTimeouts().GetRequest() != nil || a.GetTimeouts().GetBackendRequest() != nil || a.GetRetry() != nil ||
		rw.GetHostname() != "" || rw.GetHasPath() {
		return false
	}
	if m.GetPath().GetType() == irv1.PathMatch_TYPE_REGEX || m.GetMethod() != "" || len(m.GetQueryParams()) > 0 ||
		!clean(r.GetName()) || !clean(m.GetPath().GetValue()) {
		return false
	}
	for _, h := range m.GetHeaders() {
		if h.GetRegex() || h.GetName() == "" || !clean(h.GetName()) || !clean(h.GetValue()) {
			return false
		}
	}
	for _, b := range a.GetBackends() {
		if b.GetBackend() == "" || !clean(b.GetBackend()) || b.GetRequestHeaders() != nil || b.GetResponseHeaders() != nil {
			return false
		}
	}
	return simpleModifier(a.GetRequestHeaders()) && simpleModifier(a.GetResponseHeaders())
}

// simpleModifier reports whether ValidateAll accepts the headers a
// modifier adds, sets and removes.
func simpleModifier(m *irv1.HeaderModifier) bool {
	if len(m.GetSet())+len(m.GetAdd()) > 1000 {
		return false
	}
	for _, hs := range [][]*irv1.Header{m.GetSet(), m.GetAdd()} {
		for _, h := range hs {
			if h.GetName() == "" || len(h.GetName()) > 16384 || len(h.GetValue()) > 16384 || !clean(h.GetName()) || !clean(h.GetValue()) {
				return false
			}
		}
	}
	for _, name := range m.GetRemove() {
		if name == "" || !clean(name) {
			return false
		}
	}
	return true
}

// clean reports whether s is valid UTF-8 without NUL, CR or LF: what
// every string of these messages must be.
func clean(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c == 0 || c == '\n' || c == '\r':
			return false
		case c >= utf8.RuneSelf:
			return utf8.ValidString(s[i:]) && !strings.ContainsAny(s[i:], "\x00\r\n")
		}
	}
	return true
}

// sizes sets the sizes of the Route, its match and its action.
func (w *wireRoute) sizes() {
	a := w.r.GetAction()
	w.match, w.action = w.matchSize(), actionSize(a.GetBackends())
	w.size = sizeMessage(1, w.match) + sizeMessage(2, w.action) +
		modifierSize(9, 12, a.GetRequestHeaders()) + modifierSize(10, 11, a.GetResponseHeaders())
	if w.name != "" {
		w.size += sizeString(14, w.name)
	}
}

// append appends the Route, once its sizes are set.
func (w *wireRoute) append(b []byte) []byte {
	a := w.r.GetAction()
	b = appendMessageHead(b, 1, w.match) // Route.match
	b = w.appendMatch(b)
	b = appendHeaderOptions(b, 9, a.GetRequestHeaders())   // Route.request_headers_to_add
	b = appendHeaderOptions(b, 10, a.GetResponseHeaders()) // Route.response_headers_to_add
	for _, name := range a.GetResponseHeaders().GetRemove() {
		b = appendString(b, 11, name) // Route.response_headers_to_remove
	}
	for _, name := range a.GetRequestHeaders().GetRemove() {
		b = appendString(b, 12, name) // Route.request_headers_to_remove
	}
	if w.name != "" {
		b = appendString(b, 14, w.name) // Route.name
	}
	b = appendMessageHead(b, 2, w.action) // Route.route, a oneof
	return appendAction(b, a.GetBackends())
}

// pathField is RouteMatch.prefix (1) or RouteMatch.path (2).
func (w *wireRoute) pathField() protowire.Number {
	if w.exact {
		return 2
	}
	return 1
}

func (w *wireRoute) matchSize() int {
	n := sizeString(w.pathField(), w.path)
	for _, h := range w.r.GetMatch().GetHeaders() {
		n += sizeMessage(6, headerMatcherSize(h))
	}
	return n
}

func (w *wireRoute) appendMatch(b []byte) []byte {
	for _, h := range w.r.GetMatch().GetHeaders() {
		b = appendMessageHead(b, 6, headerMatcherSize(h))         // RouteMatch.headers
		b = appendString(b, 1, h.GetName())                       // HeaderMatcher.name
		b = appendMessageHead(b, 13, sizeString(1, h.GetValue())) // HeaderMatcher.string_match
		b = appendString(b, 1, h.GetValue())                      // StringMatcher.exact
	}
	return appendString(b, w.pathField(), w.path) // RouteMatch.prefix or .path, a oneof
}

func headerMatcherSize(h *irv1.HeaderMatch) int {
	return sizeString(1, h.GetName()) + sizeMessage(13, sizeString(1, h.GetValue()))
}

// actionSize is the size of the RouteAction of [clusters] (backends).
func actionSize(backends []*irv1.WeightedBackend) int {
	if len(backends) == 1 {
		return sizeString(1, backends[0].GetBackend())
	}
	return sizeMessage(3, weightedSize(backends))
}

func appendAction(b []byte, backends []*irv1.WeightedBackend) []byte {
	if len(backends) == 1 {
		return appendString(b, 1, backends[0].GetBackend()) // RouteAction.cluster
	}
	b = appendMessageHead(b, 3, weightedSize(backends)) // RouteAction.weighted_clusters
	for _, be := range backends {
		b = appendMessageHead(b, 1, clusterWeightSize(be)) // WeightedCluster.clusters
		b = appendString(b, 1, be.GetBackend())            // ClusterWeight.name
		b = appendMessageHead(b, 2, uint32Size(be.GetWeight()))
		if w := be.GetWeight(); w != 0 { // ClusterWeight.weight
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.VarintType), uint64(w))
		}
	}
	return b
}

func weightedSize(backends []*irv1.WeightedBackend) int {
	n := 0
	for _, be := range backends {
		n += sizeMessage(1, clusterWeightSize(be))
	}
	return n
}

func clusterWeightSize(be *irv1.WeightedBackend) int {
	return sizeString(1, be.GetBackend()) + sizeMessage(2, uint32Size(be.GetWeight()))
}

// uint32Size is the size of a UInt32Value holding v.
func uint32Size(v uint32) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(1) + protowire.SizeVarint(uint64(v))
}

// modifierSize is the size of what [headersToAdd] (m) and its removals
// take in a Route, at the fields add and remove.
func modifierSize(add, remove protowire.Number, m *irv1.HeaderModifier) int {
	n := 0
	for _, h := range m.GetSet() {
		n += sizeMessage(add, headerOptionSize(h, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD))
	}
	for _, h := range m.GetAdd() {
		n += sizeMessage(add, headerOptionSize(h, corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD))
	}
	for _, name := range m.GetRemove() {
		n += sizeString(remove, name)
	}
	return n
}

func appendHeaderOptions(b []byte, field protowire.Number, m *irv1.HeaderModifier) []byte {
	for _, h := range m.GetSet() {
		b = appendHeaderOption(b, field, h, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD)
	}
	for _, h := range m.GetAdd() {
		b = appendHeaderOption(b, field, h, corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD)
	}
	return b
}

func headerOptionSize(h *irv1.Header, action corev3.HeaderValueOption_HeaderAppendAction) int {
	n := sizeMessage(1, headerValueSize(h))
	if action != 0 {
		n += protowire.SizeTag(3) + protowire.SizeVarint(uint64(action))
	}
	return n
}

func headerValueSize(h *irv1.Header) int {
	n := sizeString(1, h.GetName())
	if h.GetValue() != "" {
		n += sizeString(2, h.GetValue())
	}
	return n
}

func appendHeaderOption(b []byte, field protowire.Number, h *irv1.Header, action corev3.HeaderValueOption_HeaderAppendAction) []byte {
	b = appendMessageHead(b, field, headerOptionSize(h, action))
	b = appendMessageHead(b, 1, headerValueSize(h)) // HeaderValueOption.header
	b = appendString(b, 1, h.GetName())             // HeaderValue.key
	if h.GetValue() != "" {
		b = appendString(b, 2, h.GetValue()) // HeaderValue.value
	}
	if action != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, 3, protowire.VarintType), uint64(action)) // HeaderValueOption.append_action
	}
	return b
}
