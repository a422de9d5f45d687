package xdsgen

import (
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// prefixRewrite returns Envoy's prefix_rewrite that replaces the prefix a
// PathPrefix match matched with replacement, as the Gateway API's
// ReplacePrefixMatch table says: path elements are replaced, and trailing
// slashes mean nothing ("/foo/bar" with prefix "/foo/" and replacement
// "/xyz/" becomes "/xyz/bar").
//
// Envoy swaps the matched prefix for prefix_rewrite as it is; the matched
// prefix of a PathPrefix route has no trailing "/" (see routeMatch), so the
// replacement without its trailing "/" is right, except for an empty
// replacement ("" or "/"): "/foo/bar" must become "/bar", not "//bar", and
// "/foo" must become "/". Then split is set, and the route is split in two
// (see splitPrefix), each with prefix_rewrite "/". A prefix "/" matches
// every path, and each keeps its own leading "/" after the replacement.
func prefixRewrite(match *irv1.PathMatch, replacement string) (rewrite string, split bool) {
	prefix := strings.TrimRight(match.GetValue(), "/")
	replacement = strings.TrimRight(replacement, "/")
	switch {
	case prefix == "":
		return replacement + "/", false
	case replacement != "":
		return replacement, false
	}
	return "/", true
}

// splitPrefix splits a route of path_separated_prefix P into one for the
// exact path P and one for the prefix "P/", with the same action: replacing
// the matched prefix with "/" then gives "/" for P and "/rest" for
// "P/rest". The route for P is named like the route, with "/exact" added.
func splitPrefix(r *routev3.Route) []*routev3.Route {
	prefix := r.GetMatch().GetPathSeparatedPrefix()
	exact := proto.Clone(r).(*routev3.Route)
	exact.Name += "/exact"
	exact.Match.PathSpecifier = &routev3.RouteMatch_Path{Path: prefix}
	r.Match.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: prefix + "/"}
	return []*routev3.Route{exact, r}
}
