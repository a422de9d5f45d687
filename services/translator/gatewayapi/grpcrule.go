package gatewayapi

import (
	"regexp"
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// buildGRPCRules translates every rule of a GRPCRoute. IR routes are named
// like those of HTTPRoutes, under "<namespace>/<route>/grpc/".
func (t *routeBuilder) buildGRPCRules(route *gatewayv1.GRPCRoute) *httpRules {
	out := &httpRules{}
	names := newRouteNames(route.Namespace, route.Name+"/grpc")
	for i := range route.Spec.Rules {
		t.buildGRPCRule(route, i, names, out)
	}
	return out
}

// buildGRPCRule translates one rule: an IR route per match.
func (t *routeBuilder) buildGRPCRule(route *gatewayv1.GRPCRoute, i int, names *routeNames, out *httpRules) {
	rule := &route.Spec.Rules[i]
	action, used, bad := t.grpcRuleAction(route.Namespace, rule, i, out)
	matches, p := translateMatches(rule.Matches, grpcMatch)
	src := &irv1.RouteSource{Kind: resources.KindGRPCRoute, Namespace: route.Namespace, Name: route.Name, Rule: uint32(i)}
	out.add(src, rule.Name, names, translatedRule{action, used, matches, cmpProblem(bad, p)})
}

// grpcRuleAction returns what the routes of a rule do, the backends they
// send traffic to, or the problem that makes the rule invalid. References
// that cannot be resolved are recorded in out.
func (t *routeBuilder) grpcRuleAction(ns string, rule *gatewayv1.GRPCRouteRule, i int, out *httpRules) (*irv1.RouteAction, []*irv1.Backend, *problem) {
	f := t.grpcFilters(ns, rule.Filters)
	b := t.grpcBackends(ns, rule.BackendRefs)
	if u := cmpProblem(f.unresolved, b.unresolved); u != nil && out.unresolved == nil {
		out.unresolved = within(u, fieldf("rules[%d]", i))
	}
	if bad := cmpProblem(f.invalid, b.invalid); bad != nil {
		return nil, nil, bad
	}
	r := &irv1.RouteAction{RequestHeaders: f.request, ResponseHeaders: f.response, Grpc: true}
	switch {
	case f.failClosed:
		return grpcAnswer500, nil, nil
	case len(b.used) == 0: // no backendRefs, or none valid: 500 for all
		r.DirectResponse = &irv1.DirectResponse{Status: 500}
		return r, nil, nil
	}
	r.Backends, r.Mirrors = b.weighted, f.mirrors
	if b.invalidShare {
		r.DirectResponse = &irv1.DirectResponse{Status: 500} // for the share of invalid backendRefs
	}
	return r, append(b.used, f.mirrored...), nil
}

// grpcMatch translates match j of a rule: the method match on the HTTP/2
// path (/<service>/<method>) and header matches, of which the first of
// equivalent names counts.
func grpcMatch(m *gatewayv1.GRPCRouteMatch, j int) (*irv1.RouteMatch, *problem) {
	field := fieldf("matches[%d]", j)
	path, p := grpcMethodPath(m.Method, field+".method")
	if p != nil {
		return nil, p
	}
	out := &irv1.RouteMatch{Path: path}
	for k, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if containsHeader(out.Headers, name) {
			continue
		}
		hm, p := headerMatch(name, (*gatewayv1.HeaderMatchType)(h.Type), h.Value, fieldf("%s.headers[%d]", field, k))
		if p != nil {
			return nil, p
		}
		out.Headers = append(out.Headers, hm)
	}
	return out, nil
}

var (
	grpcService = regexp.MustCompile(`^(?i)\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$`)
	grpcMethod  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// grpcMethodPath translates a method match into a path match: any path
// without one; for Exact, the exact path /<service>/<method>, the prefix
// /<service>/ or the regular expression /[^/]+/<method> when only one is
// given; for RegularExpression, /(?:<service>)/(?:<method>), either part
// defaulting to [^/]+.
func grpcMethodPath(m *gatewayv1.GRPCMethodMatch, field string) (*irv1.PathMatch, *problem) {
	if m == nil {
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: "/"}, nil
	}
	var service, method string
	if m.Service != nil {
		service = *m.Service
	}
	if m.Method != nil {
		method = *m.Method
	}
	if service == "" && method == "" {
		return nil, unsupported("%s: one of service and method is required", field)
	}
	typ := gatewayv1.GRPCMethodMatchExact
	if m.Type != nil {
		typ = *m.Type
	}
	switch typ {
	case gatewayv1.GRPCMethodMatchExact:
		return exactMethodPath(service, method, field)
	case gatewayv1.GRPCMethodMatchRegularExpression:
		return regexMethodPath(service, method, field)
	}
	return nil, unsupported("%s.type: %q is not supported", field, typ)
}

func exactMethodPath(service, method, field string) (*irv1.PathMatch, *problem) {
	if service != "" && !grpcService.MatchString(service) {
		return nil, unsupported("%s.service: %q is not a valid gRPC service name", field, service)
	}
	if method != "" && !grpcMethod.MatchString(method) {
		return nil, unsupported("%s.method: %q is not a valid gRPC method name", field, method)
	}
	switch {
	case method == "":
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: "/" + service + "/"}, nil
	case service == "":
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_REGEX, Value: "/[^/]+/" + regexp.QuoteMeta(method)}, nil
	}
	return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_EXACT, Value: "/" + service + "/" + method}, nil
}

func regexMethodPath(service, method, field string) (*irv1.PathMatch, *problem) {
	parts := [2]string{"[^/]+", "[^/]+"}
	for i, v := range []string{service, method} {
		if v == "" {
			continue
		}
		if p := checkRegex(v, field+[]string{".service", ".method"}[i]); p != nil {
			return nil, p
		}
		parts[i] = "(?:" + v + ")"
	}
	expr := "/" + parts[0] + "/" + parts[1]
	if p := checkRegex(expr, field); p != nil {
		return nil, p
	}
	return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_REGEX, Value: expr}, nil
}
