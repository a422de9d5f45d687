package xdsgen

import (
	"fmt"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// InvalidBackendCluster is the cluster name of the share of traffic that
// belongs to backendRefs that could not be resolved. No such cluster exists,
// so Envoy answers that share with the route's cluster_not_found_response_code
// (500).
const InvalidBackendCluster = "gatewire/invalid-backend"

// RouteConfiguration returns the routes of an IR listener, named like it:
// one virtual host per IR virtual host, its routes in IR order. The port of
// the Host header is ignored when matching domains. What a route does may
// depend on the listener (the port of a redirect), so an IR route shared by
// several listeners may differ between their configurations. It fails only
// when a route holds a value protobuf cannot marshal (invalid UTF-8).
func RouteConfiguration(l *irv1.Listener) (*routev3.RouteConfiguration, error) {
	rc := &routev3.RouteConfiguration{
		Name:                     l.GetName(),
		IgnorePortInHostMatching: true,
		VirtualHosts:             make([]*routev3.VirtualHost, 0, len(l.GetVirtualHosts())),
	}
	for _, vh := range l.GetVirtualHosts() {
		evh, err := virtualHost(vh, l)
		if err != nil {
			return nil, err
		}
		rc.VirtualHosts = append(rc.VirtualHosts, evh)
	}
	return rc, nil
}

// virtualHost is the Envoy virtual host of vh on listener l: its routes in
// IR order, its one domain the IR hostname.
func virtualHost(vh *irv1.VirtualHost, l *irv1.Listener) (*routev3.VirtualHost, error) {
	routes := make([]*routev3.Route, 0, len(vh.GetRoutes()))
	for _, r := range vh.GetRoutes() {
		rs, err := envoyRoutes(r, l)
		if err != nil {
			return nil, fmt.Errorf("route configuration %s, route %s: %w", l.GetName(), r.GetName(), err)
		}
		routes = append(routes, rs...)
	}
	return &routev3.VirtualHost{Name: vh.GetName(), Domains: []string{vh.GetHostname()}, Routes: routes}, nil
}

// envoyRoutes returns the Envoy routes of an IR route on listener l: one,
// or two for the path prefix of an HTTPRoute that is not "/" (see
// splitPrefix). The prefix "/<service>/" of a GRPCRoute's service match
// needs no route for "/<service>", which is no gRPC method's path.
func envoyRoutes(r *irv1.Route, l *irv1.Listener) ([]*routev3.Route, error) {
	cors, err := corsConfig(r.GetAction().GetCors())
	if err != nil {
		return nil, err
	}
	out := &routev3.Route{
		Name:                    r.GetName(),
		Match:                   routeMatch(r.GetMatch()),
		RequestHeadersToAdd:     headersToAdd(r.GetAction().GetRequestHeaders()),
		RequestHeadersToRemove:  r.GetAction().GetRequestHeaders().GetRemove(),
		ResponseHeadersToAdd:    headersToAdd(r.GetAction().GetResponseHeaders()),
		ResponseHeadersToRemove: r.GetAction().GetResponseHeaders().GetRemove(),
		TypedPerFilterConfig:    cors,
	}
	switch {
	case r.GetAction().GetRedirect() != nil:
		out.Action = &routev3.Route_Redirect{Redirect: redirectAction(r, l)}
	case len(r.GetAction().GetBackends()) == 0:
		out.Action = &routev3.Route_DirectResponse{DirectResponse: directResponse(r.GetAction().GetDirectResponse())}
	default:
		out.Action = &routev3.Route_Route{Route: routeAction(r)}
	}
	if p := out.GetMatch().GetPrefix(); p != "/" && p != "" && !r.GetAction().GetGrpc() {
		return splitPrefix(out), nil
	}
	return []*routev3.Route{out}, nil
}

// directResponse answers with d, or 500 when the IR says nothing.
func directResponse(d *irv1.DirectResponse) *routev3.DirectResponseAction {
	status := d.GetStatus()
	if status == 0 {
		status = 500
	}
	out := &routev3.DirectResponseAction{Status: status}
	if d.GetBody() != "" {
		out.Body = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: d.GetBody()}}
	}
	return out
}

// routeMatch translates an IR match. A path prefix P is the prefix "P/",
// a trailing "/" of P ignored: a route for the path P itself is added by
// splitPrefix where it is needed.
func routeMatch(m *irv1.RouteMatch) *routev3.RouteMatch {
	out := &routev3.RouteMatch{}
	p := m.GetPath()
	switch p.GetType() {
	case irv1.PathMatch_TYPE_EXACT:
		out.PathSpecifier = &routev3.RouteMatch_Path{Path: p.GetValue()}
	case irv1.PathMatch_TYPE_REGEX:
		out.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: p.GetValue()}}
	default:
		out.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: strings.TrimRight(p.GetValue(), "/") + "/"}
	}
	if method := m.GetMethod(); method != "" {
		out.Headers = append(out.Headers, headerMatcher(":method", method, false))
	}
	for _, h := range m.GetHeaders() {
		out.Headers = append(out.Headers, headerMatcher(h.GetName(), h.GetValue(), h.GetRegex()))
	}
	for _, q := range m.GetQueryParams() {
		out.QueryParameters = append(out.QueryParameters, &routev3.QueryParameterMatcher{
			Name:                         q.GetName(),
			QueryParameterMatchSpecifier: &routev3.QueryParameterMatcher_StringMatch{StringMatch: stringMatcher(q.GetValue(), q.GetRegex())},
		})
	}
	return out
}

func headerMatcher(name, value string, regex bool) *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{
		Name:                 name,
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: stringMatcher(value, regex)},
	}
}

func stringMatcher(value string, regex bool) *matcherv3.StringMatcher {
	if regex {
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: value}}}
	}
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: value}}
}

// headersToAdd returns the headers m sets (replacing any value) and adds
// (keeping existing values).
func headersToAdd(m *irv1.HeaderModifier) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, h := range m.GetSet() {
		out = append(out, headerOption(h, corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD))
	}
	for _, h := range m.GetAdd() {
		out = append(out, headerOption(h, corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD))
	}
	return out
}

func headerOption(h *irv1.Header, action corev3.HeaderValueOption_HeaderAppendAction) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: h.GetName(), Value: h.GetValue()},
		AppendAction: action,
	}
}
