package gatewayapi

import (
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// mirror translates a RequestMirror filter of an HTTPRoute or a GRPCRoute
// (from: its kind and namespace) into out. A mirror whose backend cannot
// be resolved is left out, and ResolvedRefs says why, as the spec
// requires; one that mirrors no request (0 percent) is left out too. The
// share mirrored is a percentage: percent as given, or 100 × numerator /
// denominator of fraction, or 100.
func (t *routeBuilder) mirror(from Reference, f *gatewayv1.HTTPRequestMirrorFilter, field string, out *ruleFilters) *problem {
	if f == nil {
		return unsupported("%s: missing", field)
	}
	percent, p := mirrorPercent(f, field)
	if p != nil {
		return p
	}
	b, p := t.resolveBackendFrom(from, f.BackendRef)
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

func mirrorPercent(f *gatewayv1.HTTPRequestMirrorFilter, field string) (float64, *problem) {
	switch {
	case f.Percent != nil && f.Fraction != nil:
		return 0, unsupported("%s: only one of percent and fraction may be set", field)
	case f.Percent != nil:
		if *f.Percent < 0 || *f.Percent > 100 {
			return 0, unsupported("%s.percent: %d is not between 0 and 100", field, *f.Percent)
		}
		return float64(*f.Percent), nil
	case f.Fraction != nil:
		den := int32(100)
		if f.Fraction.Denominator != nil {
			den = *f.Fraction.Denominator
		}
		if den < 1 || f.Fraction.Numerator < 0 || f.Fraction.Numerator > den {
			return 0, unsupported("%s.fraction: %d/%d is not a fraction between 0 and 1", field, f.Fraction.Numerator, den)
		}
		return 100 * float64(f.Fraction.Numerator) / float64(den), nil
	}
	return 100, nil
}

// within prefixes the message of p with the field it is about.
func within(p *problem, field string) *problem {
	return &problem{p.reason, field + ": " + p.message}
}

// under prefixes the field a problem's message starts with by the field
// that holds it: "name: ..." under "headers[0]" is "headers[0].name: ...",
// and ": ..." (about the field itself) is "headers[0]: ...". Under "" the
// problem is unchanged.
func under(p *problem, field string) *problem {
	switch {
	case p == nil || field == "":
		return p
	case strings.HasPrefix(p.message, ":"):
		return &problem{p.reason, field + p.message}
	}
	return &problem{p.reason, field + "." + p.message}
}
