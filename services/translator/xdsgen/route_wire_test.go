package xdsgen

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// compareVhost checks that vhostWire takes vh only when the messages
// accept it, and then gives their bytes and the clusters they name; it
// reports whether vhostWire took it.
func compareVhost(t testing.TB, vh *irv1.VirtualHost) bool {
	t.Helper()
	l := &irv1.Listener{Name: "http-80", Port: 80}
	got, refs, ok := vhostWire(vh)
	if !ok {
		return false
	}
	evh, err := vhostMessage(vh, l)
	if err != nil {
		t.Fatalf("vhostWire took a virtual host the messages reject: %v", err)
	}
	if want := marshal(t, evh); !bytes.Equal(got, want) {
		t.Fatalf("virtual host %s:\n got %x\nwant %x", vh.GetName(), got, want)
	}
	var want []ref
	for _, rt := range evh.GetRoutes() {
		for _, c := range routeClusters(rt.GetRoute()) {
			want = append(want, ref{"type.googleapis.com/envoy.config.cluster.v3.Cluster", c})
		}
	}
	if !slices.Equal(refs, want) {
		t.Fatalf("virtual host %s names %v, the messages %v", vh.GetName(), refs, want)
	}
	return true
}

func simpleVhost(routes ...*irv1.Route) *irv1.VirtualHost {
	return &irv1.VirtualHost{Name: "www.example.com", Hostname: "www.example.com", Routes: routes}
}

func simpleIRRoute(name string, path *irv1.PathMatch, backends ...*irv1.WeightedBackend) *irv1.Route {
	return &irv1.Route{Name: name, Match: &irv1.RouteMatch{Path: path}, Action: &irv1.RouteAction{Backends: backends}}
}

func TestVhostWire(t *testing.T) {
	prefix := func(v string) *irv1.PathMatch { return &irv1.PathMatch{Type: irv1.PathMatch_TYPE_PREFIX, Value: v} }
	exact := &irv1.PathMatch{Type: irv1.PathMatch_TYPE_EXACT, Value: "/exact"}
	one := &irv1.WeightedBackend{Backend: "ns/a/80", Weight: 1}
	two := []*irv1.WeightedBackend{{Backend: "ns/a/80", Weight: 80}, {Backend: "ns/b/80", Weight: 0}, {Backend: strings.Repeat("c", 200), Weight: 300}}
	headers := &irv1.HeaderModifier{
		Set:    []*irv1.Header{{Name: "x-set", Value: "v"}, {Name: "x-empty"}},
		Add:    []*irv1.Header{{Name: "x-add", Value: strings.Repeat("w", 300)}},
		Remove: []string{"x-gone", "x-also"},
	}
	withHeaders := simpleIRRoute("ns/headers/0", prefix("/h"), two...)
	withHeaders.Action.RequestHeaders, withHeaders.Action.ResponseHeaders = headers, &irv1.HeaderModifier{Remove: []string{"server"}}
	withHeaders.Match.Headers = []*irv1.HeaderMatch{{Name: "x-tenant", Value: "t1"}, {Name: "x-empty"}}
	grpc := simpleIRRoute("ns/grpc/0", prefix("/pkg.Service/"), one)
	grpc.Action.Grpc = true
	takes := map[string]*irv1.VirtualHost{
		"prefix /":              simpleVhost(simpleIRRoute("ns/r/0", prefix("/"), one)),
		"no path":               simpleVhost(simpleIRRoute("ns/r/0", nil, one)),
		"prefix split":          simpleVhost(simpleIRRoute("ns/r/0", prefix("/api/"), two...)),
		"exact":                 simpleVhost(simpleIRRoute("ns/r/0", exact, one)),
		"no name":               simpleVhost(simpleIRRoute("", prefix("/a"), one)),
		"headers":               simpleVhost(withHeaders, simpleIRRoute("ns/r/1", exact, one)),
		"grpc":                  simpleVhost(grpc),
		"wildcard, no hostname": {Name: "*", Routes: []*irv1.Route{simpleIRRoute("ns/r/0", prefix("/"), one)}},
		"no routes":             simpleVhost(),
		"long":                  simpleVhost(simpleIRRoute(strings.Repeat("n", 20000), prefix("/"+strings.Repeat("p", 200)), one)),
	}
	for name, vh := range takes {
		t.Run(name, func(t *testing.T) {
			if !compareVhost(t, vh) {
				t.Fatal("vhostWire declined it")
			}
		})
	}
	declines := map[string]func(r *irv1.Route){
		"regex path":     func(r *irv1.Route) { r.Match.Path = &irv1.PathMatch{Type: irv1.PathMatch_TYPE_REGEX, Value: "/.*"} },
		"method":         func(r *irv1.Route) { r.Match.Method = "GET" },
		"query":          func(r *irv1.Route) { r.Match.QueryParams = []*irv1.QueryMatch{{Name: "q", Value: "v"}} },
		"regex header":   func(r *irv1.Route) { r.Match.Headers = []*irv1.HeaderMatch{{Name: "x", Value: ".*", Regex: true}} },
		"redirect":       func(r *irv1.Route) { r.Action.Redirect = &irv1.Redirect{} },
		"no backends":    func(r *irv1.Route) { r.Action.Backends = nil },
		"invalid share":  func(r *irv1.Route) { r.Action.Backends = []*irv1.WeightedBackend{{Weight: 1}} },
		"backend filter": func(r *irv1.Route) { r.Action.Backends[0].RequestHeaders = &irv1.HeaderModifier{Remove: []string{"x"}} },
		"mirror":         func(r *irv1.Route) { r.Action.Mirrors = []*irv1.Mirror{{Backend: "ns/m/80", Percent: 100}} },
		"cors":           func(r *irv1.Route) { r.Action.Cors = &irv1.CORS{} },
		"timeout":        func(r *irv1.Route) { r.Action.Timeouts = &irv1.Timeouts{Request: durationpb.New(1)} },
		"retry":          func(r *irv1.Route) { r.Action.Retry = &irv1.Retry{} },
		"host rewrite":   func(r *irv1.Route) { r.Action.UrlRewrite = &irv1.URLRewrite{Hostname: "h"} },
		"path rewrite":   func(r *irv1.Route) { r.Action.UrlRewrite = &irv1.URLRewrite{HasPath: true, Prefix: "/"} },
		"empty header":   func(r *irv1.Route) { r.Match.Headers = []*irv1.HeaderMatch{{Value: "v"}} },
		"NUL in value": func(r *irv1.Route) {
			r.Action.RequestHeaders = &irv1.HeaderModifier{Set: []*irv1.Header{{Name: "x", Value: "a\x00b"}}}
		},
		"LF in name": func(r *irv1.Route) {
			r.Action.ResponseHeaders = &irv1.HeaderModifier{Add: []*irv1.Header{{Name: "x\ny", Value: "v"}}}
		},
		"empty removal": func(r *irv1.Route) { r.Action.RequestHeaders = &irv1.HeaderModifier{Remove: []string{""}} },
		"invalid UTF-8": func(r *irv1.Route) { r.Name = "ns/\xff/0" },
		"long value": func(r *irv1.Route) {
			r.Action.RequestHeaders = &irv1.HeaderModifier{Set: []*irv1.Header{{Name: "x", Value: strings.Repeat("v", 16385)}}}
		},
	}
	for name, change := range declines {
		t.Run(name, func(t *testing.T) {
			r := simpleIRRoute("ns/r/0", prefix("/a"), proto.Clone(one).(*irv1.WeightedBackend))
			change(r)
			if compareVhost(t, simpleVhost(r)) {
				t.Fatal("vhostWire took it")
			}
		})
	}
	if compareVhost(t, &irv1.VirtualHost{Hostname: "h"}) {
		t.Error("vhostWire took a virtual host without a name")
	}
}

// TestSimpleRouteKnowsEveryField fails when the IR messages a route is
// made of gain a field: simpleRoute must then decline the routes that set
// it, or the wire encoder write it.
func TestSimpleRouteKnowsEveryField(t *testing.T) {
	known := map[string][]string{
		"Route":           {"name", "source", "match", "action"},
		"RouteMatch":      {"path", "headers", "query_params", "method"},
		"PathMatch":       {"type", "value"},
		"HeaderMatch":     {"name", "value", "regex"},
		"RouteAction":     {"request_headers", "response_headers", "backends", "direct_response", "redirect", "url_rewrite", "mirrors", "cors", "timeouts", "retry", "grpc"},
		"HeaderModifier":  {"add", "set", "remove"},
		"Header":          {"name", "value"},
		"WeightedBackend": {"backend", "weight", "request_headers", "response_headers"},
		"Timeouts":        {"request", "backend_request"},
		"VirtualHost":     {"name", "hostname", "routes"},
	}
	for _, m := range []proto.Message{&irv1.Route{}, &irv1.RouteMatch{}, &irv1.PathMatch{}, &irv1.HeaderMatch{}, &irv1.RouteAction{},
		&irv1.HeaderModifier{}, &irv1.Header{}, &irv1.WeightedBackend{}, &irv1.Timeouts{}, &irv1.VirtualHost{}} {
		d := m.ProtoReflect().Descriptor()
		var names []string
		fields := d.Fields()
		for i := range fields.Len() {
			names = append(names, string(fields.Get(i).Name()))
		}
		if want := known[string(d.Name())]; !slices.Equal(names, want) {
			t.Errorf("ir.v1.%s has the fields %v; route_wire.go was written for %v", d.Name(), names, want)
		}
	}
}

// FuzzVhostWire compares the virtual host encoder with the messages for
// routes made of arbitrary strings and weights.
func FuzzVhostWire(f *testing.F) {
	f.Add("www.example.com", "ns/r/0", "/api/", uint8(1), "x-tenant", "t1", "x-set", "v", "ns/a/80", uint32(80), false)
	f.Add("", "", "", uint8(2), "", "", "", "", "", uint32(0), true)
	f.Add("*", "r", "/\x00", uint8(0), "a\nb", "\xff", "k", "", "b", uint32(1<<31), false)
	f.Fuzz(func(t *testing.T, host, name, path string, pathType uint8, matchName, matchValue, setName, setValue, backend string, weight uint32, grpc bool) {
		r := &irv1.Route{
			Name: name,
			Match: &irv1.RouteMatch{
				Path:    &irv1.PathMatch{Type: irv1.PathMatch_Type(pathType % 4), Value: path},
				Headers: []*irv1.HeaderMatch{{Name: matchName, Value: matchValue}},
			},
			Action: &irv1.RouteAction{
				Backends:        []*irv1.WeightedBackend{{Backend: backend, Weight: weight}, {Backend: "ns/b/80", Weight: 1}},
				RequestHeaders:  &irv1.HeaderModifier{Set: []*irv1.Header{{Name: setName, Value: setValue}}, Remove: []string{matchName}},
				ResponseHeaders: &irv1.HeaderModifier{Add: []*irv1.Header{{Name: setName, Value: matchValue}}},
				Grpc:            grpc,
			},
		}
		single := proto.Clone(r).(*irv1.Route)
		single.Action.Backends = single.Action.Backends[:1]
		compareVhost(t, &irv1.VirtualHost{Name: host, Hostname: host, Routes: []*irv1.Route{r, single}})
	})
}

func TestClean(t *testing.T) {
	for _, s := range []string{"", "a", "abc", "a\x00", "\nb", "a\r", "é", "éa\n", "é\x00", "\xff", "a\xffb", "ok é ok", "é\xff"} {
		want := utf8.ValidString(s) && !strings.ContainsAny(s, "\x00\r\n")
		if got := clean(s); got != want {
			t.Errorf("clean(%q) = %v, want %v", s, got, want)
		}
	}
}
