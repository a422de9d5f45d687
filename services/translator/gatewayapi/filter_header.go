package gatewayapi

import (
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// headerModifier translates a RequestHeaderModifier or
// ResponseHeaderModifier. As the spec says, a header name may have only one
// action (set, add or remove), names compared without case. Pseudo-headers
// and Host cannot be modified this way: Envoy refuses them.
func headerModifier(f *gatewayv1.HTTPHeaderFilter, field string) (*irv1.HeaderModifier, *problem) {
	if f == nil {
		return nil, unsupported("%s: missing", field)
	}
	seen := map[string]bool{}
	name := func(n, at string) *problem {
		if p := checkHeaderName(n, at); p != nil {
			return p
		}
		if !modifiable(n) {
			return unsupported("%s: header %q cannot be modified", at, n)
		}
		lower := strings.ToLower(n)
		if seen[lower] {
			return unsupported("%s: header %q has more than one action", at, n)
		}
		seen[lower] = true
		return nil
	}
	m := &irv1.HeaderModifier{}
	for i, h := range f.Set {
		at := fieldf("%s.set[%d]", field, i)
		if p := cmpProblem(name(string(h.Name), at+".name"), checkSetValue(h.Value, at+".value")); p != nil {
			return nil, p
		}
		m.Set = append(m.Set, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for i, h := range f.Add {
		at := fieldf("%s.add[%d]", field, i)
		if p := cmpProblem(name(string(h.Name), at+".name"), checkSetValue(h.Value, at+".value")); p != nil {
			return nil, p
		}
		m.Add = append(m.Add, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for i, h := range f.Remove {
		if p := name(h, fieldf("%s.remove[%d]", field, i)); p != nil {
			return nil, p
		}
		m.Remove = append(m.Remove, h)
	}
	return m, nil
}

// checkSetValue checks a header value to set or add; unlike a value to
// match, it may be empty.
func checkSetValue(value, field string) *problem {
	if value == "" {
		return nil
	}
	return checkHeaderValue(value, field)
}

func modifiable(header string) bool {
	return !strings.EqualFold(header, "host")
}

// cmpProblem returns the first of ps that is set.
func cmpProblem(ps ...*problem) *problem {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}
