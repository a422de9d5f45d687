package xdsgen

import (
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// prefixRewrite returns Envoy's prefix_rewrite that replaces the prefix a
// PathPrefix match matched with replacement, as the Gateway API's
// ReplacePrefixMatch table says: path elements are replaced, and trailing
// slashes mean nothing ("/foo/bar" with prefix "/foo/" and replacement
// "/xyz/" becomes "/xyz/bar").
//
// Envoy swaps the matched prefix for prefix_rewrite as it is. The prefix
// of a PathPrefix route ends with "/" (see routeMatch), so its rewrite does
// too: the replacement without its trailing "/", then "/" ("/foo/bar" with
// prefix "/foo" replaced by "" becomes "/bar", not "//bar" or "bar"). The
// route for the prefix's own path has its rewrite without that "/" (see
// splitPrefix).
func prefixRewrite(replacement string) string {
	return strings.TrimRight(replacement, "/") + "/"
}

// splitPrefix makes the route r of a path prefix P (its match the prefix
// "P/", see routeMatch) match what the Gateway API's PathPrefix P matches:
// the path P, and every path under "P/", not "Pxyz". It returns a route
// for the exact path P, named like r with "/exact" added, then r. Both have
// r's action; the exact route replaces the whole path P where r replaces
// "P/" (prefix_rewrite "/xyz" rather than "/xyz/", "/" rather than "").
//
// Envoy's path_separated_prefix matches the same paths as one route, but
// gRPC's xDS client rejects a RouteConfiguration that holds one anywhere,
// and a proxyless client is served the same RouteConfigurations as Envoy.
// No IR route name ends with "/exact" (IR names end with a hash), so the
// names stay unique.
func splitPrefix(r *routev3.Route) []*routev3.Route {
	prefix := r.GetMatch().GetPrefix()
	exact := proto.Clone(r).(*routev3.Route)
	exact.Name += "/exact"
	exact.Match.PathSpecifier = &routev3.RouteMatch_Path{Path: strings.TrimSuffix(prefix, "/")}
	if rw := exact.GetRoute(); rw.GetPrefixRewrite() != "" {
		rw.PrefixRewrite = exactRewrite(rw.GetPrefixRewrite())
	}
	if rd := exact.GetRedirect(); rd.GetPrefixRewrite() != "" {
		rd.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: exactRewrite(rd.GetPrefixRewrite())}
	}
	return []*routev3.Route{exact, r}
}

// exactRewrite is the rewrite of the path P given the rewrite of the
// prefix "P/": without its trailing "/", or "/" when nothing is left.
func exactRewrite(prefixRewrite string) string {
	if rw := strings.TrimSuffix(prefixRewrite, "/"); rw != "" {
		return rw
	}
	return "/"
}
