package gatewayapi

import (
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// headerModifier translates a RequestHeaderModifier or
// ResponseHeaderModifier; a problem names its fields under field (from the
// filter's when field is ""). As the spec says, a header name may have only
// one action (set, add or remove), names compared without case. Host
// cannot be modified this way: Envoy refuses it.
func headerModifier(f *gatewayv1.HTTPHeaderFilter, field string) (*irv1.HeaderModifier, *problem) {
	m, p := translateHeaderModifier(f)
	return m, under(p, field)
}

func translateHeaderModifier(f *gatewayv1.HTTPHeaderFilter) (*irv1.HeaderModifier, *problem) {
	if f == nil {
		return nil, unsupported(": missing")
	}
	seen := map[string]bool{}
	m := &irv1.HeaderModifier{}
	for i, h := range f.Set {
		if p := cmpProblem(actionName(string(h.Name), seen), checkSetValue(h.Value)); p != nil {
			return nil, under(p, fieldf("set[%d]", i))
		}
		m.Set = append(m.Set, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for i, h := range f.Add {
		if p := cmpProblem(actionName(string(h.Name), seen), checkSetValue(h.Value)); p != nil {
			return nil, under(p, fieldf("add[%d]", i))
		}
		m.Add = append(m.Add, &irv1.Header{Name: string(h.Name), Value: h.Value})
	}
	for i, h := range f.Remove {
		if p := actionName(h, seen); p != nil {
			return nil, under(&problem{p.reason, strings.TrimPrefix(p.message, "name")}, fieldf("remove[%d]", i))
		}
		m.Remove = append(m.Remove, h)
	}
	return m, nil
}

// actionName checks the name of a header a modifier acts on, and that no
// other action of the modifier (names in seen) acts on it.
func actionName(name string, seen map[string]bool) *problem {
	if p := checkHeaderName(name, "name"); p != nil {
		return p
	}
	if !modifiable(name) {
		return unsupported("name: header %q cannot be modified", name)
	}
	lower := strings.ToLower(name)
	if seen[lower] {
		return unsupported("name: header %q has more than one action", name)
	}
	seen[lower] = true
	return nil
}

// checkSetValue checks a header value to set or add; unlike a value to
// match, it may be empty.
func checkSetValue(value string) *problem {
	if value == "" {
		return nil
	}
	return checkHeaderValue(value, "value")
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
