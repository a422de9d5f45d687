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
// r's action, shared; the exact route replaces the whole path P where r
// replaces "P/" (prefix_rewrite "/xyz" rather than "/xyz/", "/" rather than
// ""), in an action of its own.
//
// Envoy's path_separated_prefix matches the same paths as one route, but
// gRPC's xDS client rejects a RouteConfiguration that holds one anywhere,
// and a proxyless client is served the same RouteConfigurations as Envoy.
// No IR route name ends with "/exact" (IR names end with a hash), so the
// names stay unique.
func splitPrefix(r *routev3.Route) []*routev3.Route {
	prefix := r.GetMatch().GetPrefix()
	exact := copyRoute(r)
	exact.Name += "/exact"
	exact.Match = copyMatch(r.GetMatch())
	exact.Match.PathSpecifier = &routev3.RouteMatch_Path{Path: strings.TrimSuffix(prefix, "/")}
	if rw := exact.GetRoute(); rw.GetPrefixRewrite() != "" {
		rw = proto.Clone(rw).(*routev3.RouteAction)
		rw.PrefixRewrite = exactRewrite(rw.GetPrefixRewrite())
		exact.Action = &routev3.Route_Route{Route: rw}
	}
	if rd := exact.GetRedirect(); rd.GetPrefixRewrite() != "" {
		rd = proto.Clone(rd).(*routev3.RedirectAction)
		rd.PathRewriteSpecifier = &routev3.RedirectAction_PrefixRewrite{PrefixRewrite: exactRewrite(rd.GetPrefixRewrite())}
		exact.Action = &routev3.Route_Redirect{Redirect: rd}
	}
	return []*routev3.Route{exact, r}
}

// copyRoute and copyMatch return a new message with the fields of r or m:
// their messages, lists and maps are shared. A Builder never changes a
// resource once built, so two routes may share parts; what a copy changes
// it sets anew. They name every field (TestCopiesKeepEveryField fails when
// Envoy's API gains one they miss): reflection would cost as much as a
// deep copy.
func copyRoute(r *routev3.Route) *routev3.Route {
	return &routev3.Route{
		Name: r.Name, Match: r.Match, Action: r.Action, Metadata: r.Metadata, Decorator: r.Decorator,
		TypedPerFilterConfig: r.TypedPerFilterConfig,
		RequestHeadersToAdd:  r.RequestHeadersToAdd, RequestHeadersToRemove: r.RequestHeadersToRemove,
		ResponseHeadersToAdd: r.ResponseHeadersToAdd, ResponseHeadersToRemove: r.ResponseHeadersToRemove,
		Tracing: r.Tracing, PerRequestBufferLimitBytes: r.PerRequestBufferLimitBytes, StatPrefix: r.StatPrefix,
		RequestBodyBufferLimit: r.RequestBodyBufferLimit, RouteSpecifiers: r.RouteSpecifiers,
	}
}

func copyMatch(m *routev3.RouteMatch) *routev3.RouteMatch {
	return &routev3.RouteMatch{
		PathSpecifier: m.PathSpecifier, CaseSensitive: m.CaseSensitive, RuntimeFraction: m.RuntimeFraction,
		Headers: m.Headers, QueryParameters: m.QueryParameters, Cookies: m.Cookies, Grpc: m.Grpc,
		TlsContext: m.TlsContext, DynamicMetadata: m.DynamicMetadata, FilterState: m.FilterState,
	}
}

// exactRewrite is the rewrite of the path P given the rewrite of the
// prefix "P/": without its trailing "/", or "/" when nothing is left.
func exactRewrite(prefixRewrite string) string {
	if rw := strings.TrimSuffix(prefixRewrite, "/"); rw != "" {
		return rw
	}
	return "/"
}
