package gatewayapi

import (
	"fmt"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// grpcFilters translates the filters of a GRPCRoute rule in namespace ns:
// RequestHeaderModifier, ResponseHeaderModifier (once each) and
// RequestMirror. An ExtensionRef cannot be resolved (gatewire knows no
// extension kinds): ResolvedRefs is False and the rule answers 500.
func (t *translation) grpcFilters(ns string, filters []gatewayv1.GRPCRouteFilter) *ruleFilters {
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
			p = t.grpcMirror(ns, f.RequestMirror, field+".requestMirror", out)
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

// grpcMirror translates a RequestMirror filter of a GRPCRoute: like an
// HTTPRoute's, with ReferenceGrants from GRPCRoutes for its backend.
func (t *translation) grpcMirror(ns string, f *gatewayv1.HTTPRequestMirrorFilter, field string, out *ruleFilters) *problem {
	if f == nil {
		return unsupported("%s: missing", field)
	}
	percent, p := mirrorPercent(f, field)
	if p != nil {
		return p
	}
	b, p := t.resolveBackendFrom(routeFrom(resources.KindGRPCRoute, ns), f.BackendRef)
	if p != nil {
		out.unresolvedRef(within(p, field+".backendRef"))
		return nil
	}
	if percent == 0 {
		return nil
	}
	out.mirrors = append(out.mirrors, &irv1.Mirror{Backend: b.Name, Percent: percent})
	out.mirrored = append(out.mirrored, b)
	return nil
}

// grpcBackends translates the backendRefs of a GRPCRoute rule in namespace
// ns, as backendRefs does for HTTPRoutes: weights, header filters of their
// own, references to the same backend merged.
func (t *translation) grpcBackends(ns string, refs []gatewayv1.GRPCBackendRef) *ruleBackends {
	out := &ruleBackends{}
	from := routeFrom(resources.KindGRPCRoute, ns)
	for i := range refs {
		ref := &refs[i]
		field := fieldf("backendRefs[%d]", i)
		weight := uint32(1)
		if ref.Weight != nil {
			if *ref.Weight < 0 || *ref.Weight > maxWeight {
				out.invalid = cmpProblem(out.invalid, unsupported("%s.weight: %d is not between 0 and %d", field, *ref.Weight, maxWeight))
				continue
			}
			weight = uint32(*ref.Weight)
		}
		req, resp, p := grpcBackendFilters(ref.Filters, field)
		if p != nil {
			out.invalid = cmpProblem(out.invalid, p)
			continue
		}
		b, p := t.resolveBackendFrom(from, ref.BackendObjectReference)
		if p != nil {
			out.unresolved = cmpProblem(out.unresolved, within(p, field))
		}
		if weight == 0 {
			continue
		}
		w := &irv1.WeightedBackend{Weight: weight, RequestHeaders: req, ResponseHeaders: resp}
		if p == nil {
			w.Backend = b.Name
		}
		out.add(w, b)
	}
	return out
}

// grpcBackendFilters translates the filters of a GRPCRoute backendRef:
// only header modifiers, once each.
func grpcBackendFilters(filters []gatewayv1.GRPCRouteFilter, field string) (req, resp *irv1.HeaderModifier, p *problem) {
	seen := map[gatewayv1.GRPCRouteFilterType]bool{}
	for i := range filters {
		f := &filters[i]
		ff := fmt.Sprintf("%s.filters[%d]", field, i)
		if seen[f.Type] {
			return nil, nil, incompatible("%s: filter %s may appear only once in a backendRef", ff, f.Type)
		}
		seen[f.Type] = true
		switch f.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			req, p = headerModifier(f.RequestHeaderModifier, ff+".requestHeaderModifier")
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			resp, p = headerModifier(f.ResponseHeaderModifier, ff+".responseHeaderModifier")
		default:
			p = unsupported("%s: filter type %q is not supported on a backendRef", ff, f.Type)
		}
		if p != nil {
			return nil, nil, p
		}
	}
	return req, resp, nil
}
