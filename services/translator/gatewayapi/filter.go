package gatewayapi

import (
	"fmt"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// ruleFilters is what the filters of one rule ask for.
type ruleFilters struct {
	request, response *irv1.HeaderModifier
	redirect          *irv1.Redirect
	rewrite           *irv1.URLRewrite
	cors              *irv1.CORS
	mirrors           []*irv1.Mirror
	// mirrored are the backends of mirrors, added to the gateway when the
	// rule forwards requests.
	mirrored []*irv1.Backend

	// invalid is the first problem that makes the rule invalid.
	invalid *problem
	// unresolved is the first reference that cannot be resolved: a mirror's
	// backend (the mirror is left out) or an ExtensionRef.
	unresolved *problem
	// failClosed is set when a filter cannot be applied and must not be
	// skipped: the rule answers 500.
	failClosed bool
}

func (f *ruleFilters) fail(p *problem) {
	if f.invalid == nil && p != nil {
		f.invalid = p
	}
}

func (f *ruleFilters) unresolvedRef(p *problem) {
	if f.unresolved == nil {
		f.unresolved = p
	}
}

// repeatable are the filter types a rule may hold more than once.
var repeatable = map[gatewayv1.HTTPRouteFilterType]bool{
	gatewayv1.HTTPRouteFilterRequestMirror: true,
	gatewayv1.HTTPRouteFilterExtensionRef:  true,
}

// httpFilters translates the filters of a rule of a route in namespace ns.
// Filters gatewire does not support, repeated filters, and combinations the
// spec forbids (RequestRedirect with URLRewrite) make the rule invalid; so
// does RequestRedirect with RequestMirror, which Envoy cannot do (a redirect
// is answered without forwarding anything to mirror).
func (t *routeBuilder) httpFilters(ns string, filters []gatewayv1.HTTPRouteFilter) *ruleFilters {
	out := &ruleFilters{}
	seen := map[gatewayv1.HTTPRouteFilterType]bool{}
	for i := range filters {
		f := &filters[i]
		if seen[f.Type] && !repeatable[f.Type] {
			out.fail(incompatible("filters[%d]: filter %s may appear only once in a rule", i, f.Type))
			continue
		}
		seen[f.Type] = true
		t.httpFilter(ns, f, i, out)
	}
	switch redirect := seen[gatewayv1.HTTPRouteFilterRequestRedirect]; {
	case redirect && seen[gatewayv1.HTTPRouteFilterURLRewrite]:
		out.fail(incompatible("filters RequestRedirect and URLRewrite cannot be combined"))
	case redirect && seen[gatewayv1.HTTPRouteFilterRequestMirror]:
		out.fail(incompatible("filters RequestRedirect and RequestMirror cannot be combined: a redirect forwards nothing to mirror"))
	}
	return out
}

// httpFilter translates filter i of a rule into out. The name of the
// filter's field is formatted only for a problem.
func (t *routeBuilder) httpFilter(ns string, f *gatewayv1.HTTPRouteFilter, i int, out *ruleFilters) {
	var p *problem
	switch f.Type {
	case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
		out.request, p = headerModifier(f.RequestHeaderModifier, "requestHeaderModifier")
	case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
		out.response, p = headerModifier(f.ResponseHeaderModifier, "responseHeaderModifier")
	case gatewayv1.HTTPRouteFilterRequestRedirect:
		out.redirect, p = redirect(f.RequestRedirect, "requestRedirect")
	case gatewayv1.HTTPRouteFilterURLRewrite:
		out.rewrite, p = urlRewrite(f.URLRewrite, "urlRewrite")
	case gatewayv1.HTTPRouteFilterCORS:
		out.cors, p = cors(f.CORS, "cors")
	case gatewayv1.HTTPRouteFilterRequestMirror:
		p = t.mirror(routeFrom(resources.KindHTTPRoute, ns), f.RequestMirror, fieldf("filters[%d].requestMirror", i), out)
		out.fail(p)
		return
	case gatewayv1.HTTPRouteFilterExtensionRef:
		out.fail(extensionRef(f.ExtensionRef, fieldf("filters[%d].extensionRef", i), out))
		return
	default:
		p = unsupported(": filter type %q is not supported", f.Type)
	}
	if p != nil {
		out.fail(under(p, fieldf("filters[%d]", i)))
	}
}

// extensionRef records an ExtensionRef filter. gatewire knows no extension
// kinds, so the reference cannot be resolved: ResolvedRefs is False
// (InvalidKind) and, since a filter must never be skipped, the rule answers
// 500.
func extensionRef(ref *gatewayv1.LocalObjectReference, field string, out *ruleFilters) *problem {
	if ref == nil {
		return unsupported("%s: missing", field)
	}
	out.failClosed = true
	out.unresolvedRef(&problem{string(gatewayv1.RouteReasonInvalidKind),
		fmt.Sprintf("%s: %s %q of group %q is not a filter kind gatewire supports", field, ref.Kind, ref.Name, ref.Group)})
	return nil
}

// backendFilters translates the filters of a backendRef: only header
// modifiers are supported there.
func backendFilters(filters []gatewayv1.HTTPRouteFilter) (req, resp *irv1.HeaderModifier, p *problem) {
	seen := map[gatewayv1.HTTPRouteFilterType]bool{}
	for i := range filters {
		f := &filters[i]
		if seen[f.Type] {
			return nil, nil, incompatible("filters[%d]: filter %s may appear only once in a backendRef", i, f.Type)
		}
		seen[f.Type] = true
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			req, p = headerModifier(f.RequestHeaderModifier, "requestHeaderModifier")
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			resp, p = headerModifier(f.ResponseHeaderModifier, "responseHeaderModifier")
		default:
			p = unsupported(": filter type %q is not supported on a backendRef", f.Type)
		}
		if p != nil {
			return nil, nil, under(p, fieldf("filters[%d]", i))
		}
	}
	return req, resp, nil
}
