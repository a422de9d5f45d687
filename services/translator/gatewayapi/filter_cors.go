package gatewayapi

import (
	"regexp"
	"slices"
	"strings"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// corsOrigin is the syntax of an allowed origin: "*", or a scheme, a host
// that may start with a "*." wildcard label (or be "*"), and a port.
var corsOrigin = regexp.MustCompile(`^(\*|https?://((\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+|\*)(:[0-9]{1,5})?)$`)

// maxWildcardOrigin is the longest origin with a wildcard. Envoy matches
// such an origin with a regular expression of about one instruction per
// character, which must stay under Envoy's program size limit.
const maxWildcardOrigin = 80

// cors translates a CORS filter. Origins are compared without case (they
// are kept lower-case); maxAge is 5 seconds when unset, as the spec says.
func cors(f *gatewayv1.HTTPCORSFilter, field string) (*irv1.CORS, *problem) {
	if f == nil {
		return nil, unsupported("%s: missing", field)
	}
	out := &irv1.CORS{MaxAgeSeconds: 5, AllowCredentials: f.AllowCredentials != nil && *f.AllowCredentials}
	for i, o := range f.AllowOrigins {
		origin := strings.ToLower(string(o))
		if p := checkOrigin(origin, fieldf("%s.allowOrigins[%d]", field, i)); p != nil {
			return nil, p
		}
		out.AllowOrigins = append(out.AllowOrigins, origin)
	}
	for i, m := range f.AllowMethods {
		if m != "*" && !methods[gatewayv1.HTTPMethod(m)] {
			return nil, unsupported("%s.allowMethods[%d]: %q is not an HTTP method gatewire supports", field, i, m)
		}
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	var p *problem
	if out.AllowHeaders, p = corsHeaders(f.AllowHeaders, field+".allowHeaders"); p != nil {
		return nil, p
	}
	if out.ExposeHeaders, p = corsHeaders(f.ExposeHeaders, field+".exposeHeaders"); p != nil {
		return nil, p
	}
	for _, list := range [][]string{out.AllowOrigins, out.AllowMethods, out.AllowHeaders} {
		if len(list) > 1 && slices.Contains(list, "*") {
			return nil, unsupported("%s: '*' cannot be listed with other values", field)
		}
	}
	switch {
	case f.MaxAge < 0:
		return nil, unsupported("%s.maxAge: %d is negative", field, f.MaxAge)
	case f.MaxAge > 0:
		out.MaxAgeSeconds = uint32(f.MaxAge)
	}
	return out, nil
}

func checkOrigin(origin, field string) *problem {
	switch {
	case !corsOrigin.MatchString(origin):
		return unsupported("%s: %q is not an origin (scheme://host[:port] or *)", field, origin)
	case origin != "*" && strings.Contains(origin, "*") && len(origin) > maxWildcardOrigin:
		return unsupported("%s: an origin with a wildcard is limited to %d characters", field, maxWildcardOrigin)
	}
	return nil
}

// corsHeaders checks a list of header names, where "*" stands for all.
func corsHeaders(names []gatewayv1.HTTPHeaderName, field string) ([]string, *problem) {
	var out []string
	for i, h := range names {
		if h != "*" {
			if p := checkHeaderName(string(h), fieldf("%s[%d]", field, i)); p != nil {
				return nil, p
			}
		}
		out = append(out, string(h))
	}
	return out, nil
}
