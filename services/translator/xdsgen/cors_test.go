package xdsgen

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// TestBuilderCORSFollowsHosts checks that a Builder gives its HTTP
// listener the CORS filter exactly while a virtual host has a route with
// a CORS policy, as a new Builder would, when such a host comes, goes or
// changes among unchanged ones (kept by identity, as the translator keeps
// them).
func TestBuilderCORSFollowsHosts(t *testing.T) {
	host := func(name string, cors bool) *irv1.VirtualHost {
		action := &irv1.RouteAction{Backends: []*irv1.WeightedBackend{{Backend: "default/web/80", Weight: 1}}}
		if cors {
			action.Cors = &irv1.CORS{AllowOrigins: []string{"https://www.example.com"}}
		}
		return &irv1.VirtualHost{Name: name, Hostname: name, Routes: []*irv1.Route{{
			Name:   name + "/r",
			Match:  &irv1.RouteMatch{Path: &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: "/"}},
			Action: action,
		}}}
	}
	a, aPlain, b, c := host("a.example.com", true), host("a.example.com", false), host("b.example.com", false), host("c.example.com", false)
	steps := []struct {
		what   string
		vhosts []*irv1.VirtualHost
		cors   bool
	}{
		{"a with CORS, b, c", []*irv1.VirtualHost{a, b, c}, true},
		{"a gone", []*irv1.VirtualHost{b, c}, false},
		{"a back", []*irv1.VirtualHost{a, b, c}, true},
		{"a without CORS", []*irv1.VirtualHost{aPlain, b, c}, false},
		{"a with CORS again", []*irv1.VirtualHost{a, b, c}, true},
		{"b and c gone", []*irv1.VirtualHost{a}, true},
		{"a gone, b and c back", []*irv1.VirtualHost{b, c}, false},
	}
	x := NewBuilder()
	for _, s := range steps {
		gw := gateway("default/web/80")
		gw.Listeners[0].VirtualHosts = s.vhosts
		got, err := x.Build(gw)
		if err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		want, err := NewBuilder().Build(gw)
		if err != nil {
			t.Fatalf("%s: a new Builder: %v", s.what, err)
		}
		if !proto.Equal(got.Commit, want.Commit) {
			t.Errorf("%s: the commit differs from a new Builder's:\n got %v\nwant %v", s.what, got.Commit, want.Commit)
		}
		if has := hasCORSFilter(t, got); has != s.cors {
			t.Errorf("%s: the listener has the CORS filter: %v, want %v", s.what, has, s.cors)
		}
	}
}

// hasCORSFilter reports whether the Envoy listener http-80 of a Build
// names the CORS filter (the Build also has an API listener per hostname).
func hasCORSFilter(t *testing.T, out *Build) bool {
	t.Helper()
	for _, suffix := range out.Set.Suffixes() {
		if r := out.Set.Get(suffix); r.GetTypeUrl() == "type.googleapis.com/envoy.config.listener.v3.Listener" && r.GetName() == "http-80" {
			return strings.Contains(string(r.GetValue()), CORSFilterName)
		}
	}
	t.Fatal("no listener http-80 in the set")
	return false
}
