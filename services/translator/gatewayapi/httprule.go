package gatewayapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// httpRules is the translation of the rules of one HTTPRoute, independent of
// where it attaches. Its IR routes may be shared by several virtual hosts.
type httpRules struct {
	routes   []*irv1.Route
	backends []*irv1.Backend // the backends the routes send traffic to
	valid    int             // rules translated without a problem
	// invalid is the first rule problem (an unsupported filter or match).
	invalid *problem
	// unresolved is the first backendRef that could not be resolved.
	unresolved *problem
}

// setConditions sets the conditions the rules decide for one parent:
// ResolvedRefs, and PartiallyInvalid when some rules were dropped or answer
// an error while the route is accepted.
func (r *httpRules) setConditions(cs *conditions, accepted bool) {
	if r.unresolved != nil {
		cs.set(string(gatewayv1.RouteConditionResolvedRefs), false, r.unresolved.reason, r.unresolved.message)
	} else {
		cs.set(string(gatewayv1.RouteConditionResolvedRefs), true, string(gatewayv1.RouteReasonResolvedRefs), "All references are resolved")
	}
	if accepted && r.invalid != nil {
		cs.set(string(gatewayv1.RouteConditionPartiallyInvalid), true, r.invalid.reason, r.invalid.message)
	}
}

// buildHTTPRules translates every rule of route.
func (t *translation) buildHTTPRules(route *gatewayv1.HTTPRoute) *httpRules {
	out := &httpRules{}
	for i := range route.Spec.Rules {
		t.buildHTTPRule(route, i, out)
	}
	return out
}

// defaultMatches is what a rule without matches matches: every path.
var defaultMatches = []gatewayv1.HTTPRouteMatch{{}}

func (t *translation) buildHTTPRule(route *gatewayv1.HTTPRoute, i int, out *httpRules) {
	rule := &route.Spec.Rules[i]
	req, resp, bad := httpFilters(rule)
	weighted, used, invalidShare := t.httpBackends(route.Namespace, rule.BackendRefs, out)
	var direct *irv1.DirectResponse
	switch {
	case bad != nil: // a filter must never be skipped: answer an error instead
		weighted, used, direct = nil, nil, &irv1.DirectResponse{Status: 500}
	case len(used) == 0:
		weighted, direct = nil, &irv1.DirectResponse{Status: 500}
	case invalidShare:
		direct = &irv1.DirectResponse{Status: 500} // for the share of invalid backendRefs
	}
	out.backends = append(out.backends, used...)
	matches := rule.Matches
	if len(matches) == 0 {
		matches = defaultMatches
	}
	for j := range matches {
		match, p := httpMatch(&matches[j])
		if p != nil {
			bad = cmpProblem(bad, p)
			continue
		}
		out.routes = append(out.routes, &irv1.Route{
			Name: route.Namespace + "/" + route.Name + "/rule/" + strconv.Itoa(i) + "/match/" + strconv.Itoa(j),
			Source: &irv1.RouteSource{Kind: resources.KindHTTPRoute, Namespace: route.Namespace, Name: route.Name,
				Rule: uint32(i), Match: uint32(j)},
			Match:           match,
			RequestHeaders:  req,
			ResponseHeaders: resp,
			Backends:        weighted,
			DirectResponse:  direct,
		})
	}
	if bad == nil {
		out.valid++
	} else if out.invalid == nil {
		out.invalid = &problem{bad.reason, fmt.Sprintf("rule %d: %s", i, bad.message)}
	}
}

// cmpProblem returns the first of a and b that is set.
func cmpProblem(a, b *problem) *problem {
	if a != nil {
		return a
	}
	return b
}

// httpFilters translates the filters of a rule. A filter gatewire does not
// support, here or on a backendRef, is a problem.
func httpFilters(rule *gatewayv1.HTTPRouteRule) (req, resp *irv1.HeaderModifier, bad *problem) {
	for _, f := range rule.Filters {
		switch {
		case f.Type == gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.RequestHeaderModifier != nil:
			var p *problem
			req, p = headerModifier(f.RequestHeaderModifier)
			bad = cmpProblem(bad, p)
		case f.Type == gatewayv1.HTTPRouteFilterResponseHeaderModifier && f.ResponseHeaderModifier != nil:
			var p *problem
			resp, p = headerModifier(f.ResponseHeaderModifier)
			bad = cmpProblem(bad, p)
		default:
			bad = cmpProblem(bad, unsupported("filter type %q is not supported", f.Type))
		}
	}
	for _, ref := range rule.BackendRefs {
		if len(ref.Filters) > 0 {
			bad = cmpProblem(bad, unsupported("backendRef %s: filters on backendRefs are not supported", ref.Name))
		}
	}
	return req, resp, bad
}

func unsupported(format string, args ...any) *problem {
	return &problem{string(gatewayv1.RouteReasonUnsupportedValue), fmt.Sprintf(format, args...)}
}

// headerModifier translates a header filter. The Host header cannot be
// modified this way: Envoy refuses it.
func headerModifier(f *gatewayv1.HTTPHeaderFilter) (*irv1.HeaderModifier, *problem) {
	m := &irv1.HeaderModifier{Remove: f.Remove}
	for _, h := range f.Add {
		m.Add = append(m.Add, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for _, h := range f.Set {
		m.Set = append(m.Set, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for _, hs := range [][]*irv1.Header{m.Add, m.Set} {
		for _, h := range hs {
			if !modifiable(h.Name) {
				return nil, unsupported("header %q cannot be modified", h.Name)
			}
		}
	}
	for _, name := range m.Remove {
		if !modifiable(name) {
			return nil, unsupported("header %q cannot be removed", name)
		}
	}
	return m, nil
}

func modifiable(header string) bool {
	return !strings.EqualFold(header, "host") && !strings.HasPrefix(header, ":")
}

// httpMatch translates one match, or says why it cannot be.
func httpMatch(m *gatewayv1.HTTPRouteMatch) (*irv1.RouteMatch, *problem) {
	path, p := pathMatch(m.Path)
	if p != nil {
		return nil, p
	}
	out := &irv1.RouteMatch{Path: path}
	if m.Method != nil {
		out.Method = string(*m.Method)
	}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if containsHeader(out.Headers, name) {
			continue // the first of equivalent names wins
		}
		regex, p := isRegex(h.Type, h.Value, "header "+name)
		if p != nil {
			return nil, p
		}
		out.Headers = append(out.Headers, &irv1.HeaderMatch{Name: name, Value: h.Value, Regex: regex})
	}
	for _, q := range m.QueryParams {
		if containsQuery(out.QueryParams, string(q.Name)) {
			continue
		}
		regex, p := isRegex(q.Type, q.Value, "query parameter "+string(q.Name))
		if p != nil {
			return nil, p
		}
		out.QueryParams = append(out.QueryParams, &irv1.QueryMatch{Name: string(q.Name), Value: q.Value, Regex: regex})
	}
	return out, nil
}

func pathMatch(m *gatewayv1.HTTPPathMatch) (*irv1.PathMatch, *problem) {
	typ, value := gatewayv1.PathMatchPathPrefix, "/"
	if m != nil && m.Type != nil {
		typ = *m.Type
	}
	if m != nil && m.Value != nil {
		value = *m.Value
	}
	switch typ {
	case gatewayv1.PathMatchExact:
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_EXACT, Value: value}, nil
	case gatewayv1.PathMatchPathPrefix:
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: value}, nil
	case gatewayv1.PathMatchRegularExpression:
		if _, err := regexp.Compile(value); err != nil {
			return nil, unsupported("path regular expression %q: %v", value, err)
		}
		return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_REGEX, Value: value}, nil
	}
	return nil, unsupported("path match type %q is not supported", typ)
}

// isRegex reports whether a header or query match of type typ is a regular
// expression, checking that value compiles.
func isRegex[T ~string](typ *T, value, what string) (bool, *problem) {
	if typ == nil || string(*typ) == "Exact" {
		return false, nil
	}
	if string(*typ) != "RegularExpression" {
		return false, unsupported("%s: match type %q is not supported", what, *typ)
	}
	if _, err := regexp.Compile(value); err != nil {
		return false, unsupported("%s: regular expression %q: %v", what, value, err)
	}
	return true, nil
}

func containsHeader(hs []*irv1.HeaderMatch, name string) bool {
	for _, h := range hs {
		if h.Name == name {
			return true
		}
	}
	return false
}

func containsQuery(qs []*irv1.QueryMatch, name string) bool {
	for _, q := range qs {
		if q.Name == name {
			return true
		}
	}
	return false
}
