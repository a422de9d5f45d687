package xdsgen

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	corsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// CORSFilterName is the name of Envoy's CORS HTTP filter, and the key of a
// route's CORS policy in its typed_per_filter_config.
const CORSFilterName = "envoy.filters.http.cors"

// corsFilter is the config of the CORS HTTP filter for listener l, or nil
// when no route of l has a CORS policy. The filter goes before the router
// and does nothing by itself: each route carries its policy.
func corsFilter(l *irv1.Listener) proto.Message {
	if !hasCORS(l) {
		return nil
	}
	return &corsv3.Cors{}
}

// hasCORS reports whether a route of listener l has a CORS policy.
func hasCORS(l *irv1.Listener) bool {
	return slices.ContainsFunc(l.GetVirtualHosts(), vhostCORS)
}

// vhostCORS reports whether a route of vh has a CORS policy.
func vhostCORS(vh *irv1.VirtualHost) bool {
	return slices.ContainsFunc(vh.GetRoutes(), func(r *irv1.Route) bool { return r.GetAction().GetCors() != nil })
}

// corsConfig is the typed_per_filter_config of a route with a CORS policy.
// The policy is marked optional, so that a client without the CORS filter
// (a proxyless gRPC client) ignores it instead of refusing the routes.
func corsConfig(c *irv1.CORS) (map[string]*anypb.Any, error) {
	if c == nil {
		return nil, nil
	}
	opts := proto.MarshalOptions{Deterministic: true}
	policy := &anypb.Any{}
	if err := anypb.MarshalFrom(policy, corsPolicy(c), opts); err != nil {
		return nil, fmt.Errorf("cors policy: %w", err)
	}
	wrapped := &anypb.Any{}
	if err := anypb.MarshalFrom(wrapped, &routev3.FilterConfig{Config: policy, IsOptional: true}, opts); err != nil {
		return nil, fmt.Errorf("cors policy: %w", err)
	}
	return map[string]*anypb.Any{CORSFilterName: wrapped}, nil
}

func corsPolicy(c *irv1.CORS) *corsv3.CorsPolicy {
	p := &corsv3.CorsPolicy{
		AllowMethods:  strings.Join(c.GetAllowMethods(), ","),
		AllowHeaders:  strings.Join(c.GetAllowHeaders(), ","),
		ExposeHeaders: strings.Join(c.GetExposeHeaders(), ","),
		MaxAge:        strconv.FormatUint(uint64(c.GetMaxAgeSeconds()), 10),
	}
	if c.GetAllowCredentials() {
		p.AllowCredentials = wrapperspb.Bool(true)
	}
	for _, o := range c.GetAllowOrigins() {
		p.AllowOriginStringMatch = append(p.AllowOriginStringMatch, originMatchers(o)...)
	}
	return p
}

// defaultPorts are the ports an origin without one has, by scheme.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// originMatchers match the Origin header against an allowed origin: "*"
// matches all; an origin without port also matches with its scheme's
// default port; a wildcard host label ("*.example.com", or "*") stands for
// one or more labels.
func originMatchers(origin string) []*matcherv3.StringMatcher {
	if origin == "*" {
		return []*matcherv3.StringMatcher{regexMatcher(".*")}
	}
	scheme, hostPort, _ := strings.Cut(origin, "://")
	host, port, hasPort := strings.Cut(hostPort, ":")
	if !strings.Contains(host, "*") {
		out := []*matcherv3.StringMatcher{exactMatcher(origin)}
		if !hasPort {
			out = append(out, exactMatcher(origin+":"+defaultPorts[scheme]))
		}
		return out
	}
	portPattern := "(:" + defaultPorts[scheme] + ")?"
	if hasPort {
		portPattern = ":" + port
	}
	hostPattern := regexp.QuoteMeta(strings.TrimPrefix(host, "*"))
	return []*matcherv3.StringMatcher{regexMatcher("^" + regexp.QuoteMeta(scheme+"://") + "[^/:]+" + hostPattern + portPattern + "$")}
}

func exactMatcher(s string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s}}
}

func regexMatcher(re string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: re}}}
}
