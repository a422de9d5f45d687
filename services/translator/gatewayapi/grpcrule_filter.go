package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// grpcFilters translates the filters of a GRPCRoute rule in namespace ns:
// RequestHeaderModifier, ResponseHeaderModifier (once each) and
// RequestMirror. An ExtensionRef cannot be resolved (gatewire knows no
// extension kinds): ResolvedRefs is False and the rule answers 500.
func (t *routeBuilder) grpcFilters(ns string, filters []gatewayv1.GRPCRouteFilter) *ruleFilters {
	out := &ruleFilters{}
	seen := map[gatewayv1.GRPCRouteFilterType]bool{}
	for i := range filters {
		f := &filters[i]
		field := fieldf("filters[%d]", i)
		repeatable := f.Type == gatewayv1.GRPCRouteFilterRequestMirror || f.Type == gatewayv1.GRPCRouteFilterExtensionRef
		if seen[f.Type] && !repeatable {
			out.fail(incompatible("%s: filter %s may appear only once in a rule", field, f.Type))
			continue
		}
		seen[f.Type] = true
		var p *problem
		switch f.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			out.request, p = headerModifier(f.RequestHeaderModifier, field+".requestHeaderModifier")
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			out.response, p = headerModifier(f.ResponseHeaderModifier, field+".responseHeaderModifier")
		case gatewayv1.GRPCRouteFilterRequestMirror:
			p = t.mirror(routeFrom(resources.KindGRPCRoute, ns), f.RequestMirror, field+".requestMirror", out)
		case gatewayv1.GRPCRouteFilterExtensionRef:
			p = extensionRef(f.ExtensionRef, field+".extensionRef", out)
		default:
			p = unsupported("%s: filter type %q is not supported", field, f.Type)
		}
		if p != nil {
			out.fail(p)
		}
	}
	return out
}

// grpcBackends translates the backendRefs of a GRPCRoute rule in namespace
// ns as backendRefs does those of an HTTPRoute rule: a GRPCBackendRef holds
// the same reference and weight, and a backendRef's filters may only be
// header modifiers, which both kinds share.
func (t *routeBuilder) grpcBackends(ns string, refs []gatewayv1.GRPCBackendRef) *ruleBackends {
	as := make([]gatewayv1.HTTPBackendRef, len(refs))
	for i, ref := range refs {
		as[i].BackendRef = ref.BackendRef
		for _, f := range ref.Filters {
			as[i].Filters = append(as[i].Filters, gatewayv1.HTTPRouteFilter{
				Type:                   gatewayv1.HTTPRouteFilterType(f.Type),
				RequestHeaderModifier:  f.RequestHeaderModifier,
				ResponseHeaderModifier: f.ResponseHeaderModifier,
			})
		}
	}
	return t.backendRefs(routeFrom(resources.KindGRPCRoute, ns), as)
}
