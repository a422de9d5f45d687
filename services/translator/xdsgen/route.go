package xdsgen

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// InvalidBackendCluster is the cluster name of the share of traffic that
// belongs to backendRefs that could not be resolved. No such cluster exists,
// so Envoy answers that share with the route's cluster_not_found_response_code
// (500).
const InvalidBackendCluster = "gatewire/invalid-backend"

// RouteConfiguration returns the routes of an IR listener, named like it:
// one virtual host per IR virtual host. The port of the Host header is
// ignored when matching domains.
func RouteConfiguration(l *irv1.Listener) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{
		Name:                     l.GetName(),
		IgnorePortInHostMatching: true,
		VirtualHosts:             make([]*routev3.VirtualHost, 0, len(l.GetVirtualHosts())),
	}
	for _, vh := range l.GetVirtualHosts() {
		routes := make([]*routev3.Route, 0, len(vh.GetRoutes()))
		for _, r := range vh.GetRoutes() {
			routes = append(routes, route(r))
		}
		rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{
			Name:    vh.GetName(),
			Domains: []string{vh.GetHostname()},
			Routes:  routes,
		})
	}
	return rc
}

func route(r *irv1.Route) *routev3.Route {
	out := &routev3.Route{
		Name:                    r.GetName(),
		Match:                   routeMatch(r.GetMatch()),
		RequestHeadersToAdd:     headersToAdd(r.GetRequestHeaders()),
		RequestHeadersToRemove:  r.GetRequestHeaders().GetRemove(),
		ResponseHeadersToAdd:    headersToAdd(r.GetResponseHeaders()),
		ResponseHeadersToRemove: r.GetResponseHeaders().GetRemove(),
	}
	if len(r.GetBackends()) == 0 {
		out.Action = &routev3.Route_DirectResponse{DirectResponse: directResponse(r.GetDirectResponse())}
		return out
	}
	out.Action = &routev3.Route_Route{Route: routeAction(r.GetBackends())}
	return out
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

func routeAction(backends []*irv1.WeightedBackend) *routev3.RouteAction {
	if len(backends) == 1 && backends[0].GetBackend() != "" {
		return &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: backends[0].GetBackend()}}
	}
	action := &routev3.RouteAction{}
	weighted := &routev3.WeightedCluster{Clusters: make([]*routev3.WeightedCluster_ClusterWeight, 0, len(backends))}
	for _, b := range backends {
		name := b.GetBackend()
		if name == "" {
			name = InvalidBackendCluster
			action.ClusterNotFoundResponseCode = routev3.RouteAction_INTERNAL_SERVER_ERROR
		}
		weighted.Clusters = append(weighted.Clusters, &routev3.WeightedCluster_ClusterWeight{
			Name:   name,
			Weight: wrapperspb.UInt32(b.GetWeight()),
		})
	}
	action.ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: weighted}
	return action
}

// routeMatch translates an IR match. A prefix matches whole path segments
// ("/foo" matches "/foo" and "/foo/bar", not "/foobar"); a trailing "/" in
// the prefix is ignored.
func routeMatch(m *irv1.RouteMatch) *routev3.RouteMatch {
	out := &routev3.RouteMatch{}
	p := m.GetPath()
	switch p.GetType() {
	case irv1.PathMatch_TYPE_EXACT:
		out.PathSpecifier = &routev3.RouteMatch_Path{Path: p.GetValue()}
	case irv1.PathMatch_TYPE_REGEX:
		out.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: p.GetValue()}}
	default:
		if prefix := strings.TrimRight(p.GetValue(), "/"); prefix != "" {
			out.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: prefix}
		} else {
			out.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
		}
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
