package xdsgen

import (
	"slices"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// rewritePath does to path what Envoy does with the routes of an IR route
// with a PathPrefix match on prefix whose URL rewrite (or, with redirect,
// whose redirect) replaces the prefix with replacement: pick the first
// route that matches, swap its matched prefix (or path) for prefix_rewrite.
func rewritePath(t *testing.T, redirect bool, prefix, replacement, path string) string {
	t.Helper()
	r := &irv1.Route{
		Name:  "r",
		Match: &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: prefix}},
	}
	if redirect {
		r.Action = &irv1.RouteAction{Redirect: &irv1.Redirect{Prefix: replacement, HasPath: true}}
	} else {
		r.Action = &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "b", Weight: 1}},
			UrlRewrite: &irv1.URLRewrite{Prefix: replacement, HasPath: true}}
	}
	routes, err := envoyRoutes(r, &irv1.Listener{Port: 80})
	if err != nil {
		t.Fatal(err)
	}
	for _, er := range routes {
		if matched, ok := envoyMatch(er.GetMatch(), path); ok {
			rw := er.GetRoute().GetPrefixRewrite()
			if redirect {
				rw = er.GetRedirect().GetPrefixRewrite()
			}
			return rw + path[len(matched):]
		}
	}
	return "no match"
}

// envoyMatch returns the part of path a route match matches, as Envoy
// and gRPC's xDS client match an exact path or a prefix (the only path
// matches of a PathPrefix route).
func envoyMatch(m *routev3.RouteMatch, path string) (string, bool) {
	if m.GetPath() != "" {
		return path, path == m.GetPath()
	}
	return m.GetPrefix(), m.GetPrefix() != "" && strings.HasPrefix(path, m.GetPrefix())
}

// TestPathPrefixMatchesWholeSegments checks which paths the Envoy routes of
// a PathPrefix match: "/foo" matches "/foo" and "/foo/bar", not "/foobar";
// "/foo/" is the same as "/foo". The route of the exact path comes first,
// named like the IR route with "/exact" added; the prefix route keeps the
// IR route's name.
func TestPathPrefixMatchesWholeSegments(t *testing.T) {
	for _, prefix := range []string{"/foo", "/foo/", "/foo//"} {
		r := &irv1.Route{
			Name:   "ns/route/0123456789abcdef",
			Match:  &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: prefix}},
			Action: &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "b", Weight: 1}}},
		}
		routes, err := envoyRoutes(r, &irv1.Listener{Port: 80})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, er := range routes {
			names = append(names, er.GetName())
		}
		if want := []string{r.Name + "/exact", r.Name}; !slices.Equal(names, want) {
			t.Errorf("prefix %q: routes %q, want %q", prefix, names, want)
		}
		for path, want := range map[string]bool{
			"/foo": true, "/foo/": true, "/foo/bar": true, "/foo/bar/": true,
			"/foobar": false, "/fo": false, "/": false, "/bar/foo": false,
		} {
			got := false
			for _, er := range routes {
				if _, ok := envoyMatch(er.GetMatch(), path); ok {
					got = true
				}
			}
			if got != want {
				t.Errorf("prefix %q matches %q: %t, want %t", prefix, path, got, want)
			}
		}
	}
}

// TestPrefixRewriteFollowsTheSpecTable checks the table of the Gateway API's
// HTTPPathModifier.ReplacePrefixMatch, and what a prefix "/" does, for URL
// rewrites and redirects.
func TestPrefixRewriteFollowsTheSpecTable(t *testing.T) {
	for _, c := range []struct{ path, prefix, replacement, want string }{
		{"/foo/bar", "/foo", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo", "/xyz/", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz", "/xyz/bar"},
		{"/foo/bar", "/foo/", "/xyz/", "/xyz/bar"},
		{"/foo", "/foo", "/xyz", "/xyz"},
		{"/foo/", "/foo", "/xyz", "/xyz/"},
		{"/foo/bar", "/foo", "", "/bar"},
		{"/foo/", "/foo", "", "/"},
		{"/foo", "/foo", "", "/"},
		{"/foo/", "/foo", "/", "/"},
		{"/foo", "/foo", "/", "/"},
		{"/foobar", "/foo", "/xyz", "no match"},
		{"/a/b", "/", "/xyz", "/xyz/a/b"},
		{"/a/b", "/", "", "/a/b"},
	} {
		for _, redirect := range []bool{false, true} {
			if got := rewritePath(t, redirect, c.prefix, c.replacement, c.path); got != c.want {
				t.Errorf("%s with prefix %q replaced by %q (redirect %t) = %q, want %q", c.path, c.prefix, c.replacement, redirect, got, c.want)
			}
		}
	}
}

// TestRedirectPort checks the Location port Envoy would write for the
// redirects of the conformance test HTTPRouteRedirectPortAndScheme: "" is
// no port, which must be the scheme's default.
func TestRedirectPort(t *testing.T) {
	http80 := &irv1.Listener{Port: 80, Protocol: irv1.Protocol_PROTOCOL_HTTP}
	http8080 := &irv1.Listener{Port: 8080, Protocol: irv1.Protocol_PROTOCOL_HTTP}
	https443 := &irv1.Listener{Port: 443, Protocol: irv1.Protocol_PROTOCOL_HTTPS}
	for _, c := range []struct {
		l      *irv1.Listener
		scheme string
		port   uint32
		want   uint32
	}{
		{http80, "", 0, 0}, {http80, "", 80, 0}, {http80, "", 8080, 8080},
		{http80, "https", 0, 0}, {http80, "https", 443, 0}, {http80, "https", 8443, 8443},
		{http8080, "", 0, 8080}, {http8080, "", 80, 0}, {http8080, "https", 0, 0},
		{https443, "", 0, 0}, {https443, "", 443, 0}, {https443, "", 8443, 8443},
		{https443, "http", 0, 0}, {https443, "http", 80, 0}, {https443, "http", 8080, 8080},
	} {
		rd := &irv1.Redirect{Scheme: c.scheme, Port: c.port, Hostname: "example.org"}
		if got := redirectPort(rd, c.l); got != c.want {
			t.Errorf("listener %d, scheme %q, port %d: port_redirect %d, want %d", c.l.Port, c.scheme, c.port, got, c.want)
		}
	}
	// Without hostname, the Location keeps the request's Host and its port
	// (the listener's, or none for the default).
	for _, c := range []struct {
		l      *irv1.Listener
		scheme string
		port   uint32
		want   uint32
	}{
		{http80, "https", 0, 0},     // Envoy drops a ":80" of the request
		{http8080, "https", 0, 443}, // ":8080" must be replaced
		{http8080, "", 0, 0},        // path redirect: the request's port
		{http80, "", 8080, 8080},    // another port
		{http8080, "", 80, 80},      // the default port, replacing ":8080"
		{https443, "http", 0, 0},    // Envoy drops a ":443" of the request
		{https443, "", 443, 0},      // the request's port
	} {
		rd := &irv1.Redirect{Scheme: c.scheme, Port: c.port}
		if got := redirectPort(rd, c.l); got != c.want {
			t.Errorf("no hostname, listener %d, scheme %q, port %d: port_redirect %d, want %d", c.l.Port, c.scheme, c.port, got, c.want)
		}
	}
}

func TestOriginMatchers(t *testing.T) {
	for origin, want := range map[string]string{
		"*":                   "safe_regex:{regex:\".*\"}",
		"https://www.foo.com": "exact:\"https://www.foo.com\" exact:\"https://www.foo.com:443\"",
		"http://a.com:8080":   "exact:\"http://a.com:8080\"",
		"https://*.bar.com":   "safe_regex:{regex:\"^https://[^/:]+\\\\.bar\\\\.com(:443)?$\"}",
		"http://*:8000":       "safe_regex:{regex:\"^http://[^/:]+:8000$\"}",
	} {
		var got []string
		for _, m := range originMatchers(origin) {
			got = append(got, strings.Join(strings.Fields(m.String()), ""))
		}
		if g := strings.Join(got, ""); g != strings.ReplaceAll(want, " ", "") {
			t.Errorf("originMatchers(%q) = %s, want %s", origin, g, want)
		}
	}
}

// TestTimeoutsWithoutRetry checks that a route without a retry policy has
// none in Envoy either (gRPC's xDS client rejects num_retries 0), and that
// its one attempt is bounded by the shorter of its request and
// backendRequest timeouts ("" is no route timeout, Envoy's default; "0s"
// none at all).
func TestTimeoutsWithoutRetry(t *testing.T) {
	d := func(s string) *durationpb.Duration {
		if s == "" {
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return durationpb.New(v)
	}
	for _, c := range []struct{ request, backend, want string }{
		{"", "", ""},
		{"10s", "", "10s"},
		{"", "2s", "2s"},
		{"10s", "2s", "2s"},
		{"2s", "2s", "2s"},
		{"0s", "2s", "2s"},
		{"10s", "0s", "10s"},
		{"", "0s", "0s"},
		{"0s", "0s", "0s"},
	} {
		r := &irv1.Route{
			Action: &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "b", Weight: 1}}, Timeouts: &irv1.Timeouts{Request: d(c.request), BackendRequest: d(c.backend)}},
		}
		a := routeAction(r)
		if a.GetRetryPolicy() != nil {
			t.Errorf("request %q, backendRequest %q: retry policy %v, want none", c.request, c.backend, a.GetRetryPolicy())
		}
		if !proto.Equal(a.GetTimeout(), d(c.want)) {
			t.Errorf("request %q, backendRequest %q: timeout %v, want %q", c.request, c.backend, a.GetTimeout(), c.want)
		}
	}
	// With a retry policy, backendRequest is the per-try timeout.
	r := &irv1.Route{
		Action: &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "b", Weight: 1}}, Timeouts: &irv1.Timeouts{BackendRequest: d("2s")}, Retry: &irv1.Retry{Attempts: 2}},
	}
	a := routeAction(r)
	if p := a.GetRetryPolicy(); p.GetNumRetries().GetValue() != 2 || p.GetPerTryTimeout().AsDuration() != 2*time.Second || a.GetTimeout().AsDuration() != 6*time.Second {
		t.Errorf("retry of 2 attempts of 2s: policy %v, timeout %v; want 2 retries of 2s each within 6s", p, a.GetTimeout())
	}
}
