package gatewayapi

import (
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// methods are the HTTP methods a match may name.
var methods = map[gatewayv1.HTTPMethod]bool{
	gatewayv1.HTTPMethodGet: true, gatewayv1.HTTPMethodHead: true, gatewayv1.HTTPMethodPost: true,
	gatewayv1.HTTPMethodPut: true, gatewayv1.HTTPMethodDelete: true, gatewayv1.HTTPMethodConnect: true,
	gatewayv1.HTTPMethodOptions: true, gatewayv1.HTTPMethodTrace: true, gatewayv1.HTTPMethodPatch: true,
}

// httpMatch translates match j of a rule, or says why it cannot be. Of
// header (or query parameter) matches with equivalent names only the first
// counts, as the spec requires. Field names in problems are formatted only
// when there is one.
func httpMatch(m *gatewayv1.HTTPRouteMatch, j int) (*irv1.RouteMatch, *problem) {
	match, p := translateMatch(m)
	if p != nil {
		return nil, under(p, fieldf("matches[%d]", j))
	}
	return match, nil
}

func translateMatch(m *gatewayv1.HTTPRouteMatch) (*irv1.RouteMatch, *problem) {
	path, p := pathMatch(m.Path, "")
	if p != nil {
		return nil, under(p, "path")
	}
	out := &irv1.RouteMatch{Path: path}
	if m.Method != nil {
		if !methods[*m.Method] {
			return nil, unsupported("method: %q is not an HTTP method gatewire supports", *m.Method)
		}
		out.Method = string(*m.Method)
	}
	for k, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if containsHeader(out.Headers, name) {
			continue
		}
		hm, p := headerMatch(name, h.Type, h.Value, "")
		if p != nil {
			return nil, under(p, fieldf("headers[%d]", k))
		}
		out.Headers = append(out.Headers, hm)
	}
	for k, q := range m.QueryParams {
		if containsQuery(out.QueryParams, string(q.Name)) {
			continue
		}
		qm, p := queryMatch(string(q.Name), q.Type, q.Value, "")
		if p != nil {
			return nil, under(p, fieldf("queryParams[%d]", k))
		}
		out.QueryParams = append(out.QueryParams, qm)
	}
	return out, nil
}

// pathMatch translates the path match of field (a problem names its
// fields under field, or from the match when field is ""); a missing type
// or value is the spec's default, PathPrefix "/".
func pathMatch(m *gatewayv1.HTTPPathMatch, field string) (*irv1.PathMatch, *problem) {
	typ, value := gatewayv1.PathMatchPathPrefix, "/"
	if m != nil && m.Type != nil {
		typ = *m.Type
	}
	if m != nil && m.Value != nil {
		value = *m.Value
	}
	var out *irv1.PathMatch
	var p *problem
	switch typ {
	case gatewayv1.PathMatchExact:
		out, p = &irv1.PathMatch{Type: irv1.PathMatch_TYPE_EXACT, Value: value}, checkPath(value, "value")
	case gatewayv1.PathMatchPathPrefix:
		out, p = &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: value}, checkPath(value, "value")
	case gatewayv1.PathMatchRegularExpression:
		out, p = &irv1.PathMatch{Type: irv1.PathMatch_TYPE_REGEX, Value: value}, checkRegex(value, "value")
	default:
		p = unsupported("type: %q is not supported", typ)
	}
	if p != nil {
		return nil, under(p, field)
	}
	return out, nil
}

// headerMatch translates a header match on the lower-case header name. A
// problem names its fields under field, or from the match when field is "".
func headerMatch(name string, typ *gatewayv1.HeaderMatchType, value, field string) (*irv1.HeaderMatch, *problem) {
	if p := checkHeaderName(name, "name"); p != nil {
		return nil, under(p, field)
	}
	regex, p := matchValue(typ, value)
	if p != nil {
		return nil, under(p, field)
	}
	return &irv1.HeaderMatch{Name: name, Value: value, Regex: regex}, nil
}

// queryMatch translates a query parameter match; names are case-sensitive.
func queryMatch(name string, typ *gatewayv1.QueryParamMatchType, value, field string) (*irv1.QueryMatch, *problem) {
	if p := checkHeaderName(name, "name"); p != nil {
		return nil, under(p, field)
	}
	regex, p := matchValue(typ, value)
	if p != nil {
		return nil, under(p, field)
	}
	return &irv1.QueryMatch{Name: name, Value: value, Regex: regex}, nil
}

// matchValue checks the value of a header or query parameter match of type
// typ (Exact when nil) and reports whether it is a regular expression.
func matchValue[T ~string](typ *T, value string) (bool, *problem) {
	switch {
	case typ == nil || string(*typ) == string(gatewayv1.HeaderMatchExact):
		return false, checkHeaderValue(value, "value")
	case string(*typ) == string(gatewayv1.HeaderMatchRegularExpression):
		return true, checkRegex(value, "value")
	}
	return false, unsupported("type: %q is not supported", *typ)
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
