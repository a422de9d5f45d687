package gatewaytest

import (
	"errors"
	"io"
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// decode returns the objects of a YAML stream.
func decode(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(y), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := d.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// TestManyRoutes checks that the benchmark input holds the objects its
// doc names, each well-formed YAML.
func TestManyRoutes(t *testing.T) {
	kinds := map[string]int{}
	var last *unstructured.Unstructured
	for _, o := range decode(t, ManyRoutes(300)) {
		kinds[o.GetKind()]++
		last = o
	}
	want := map[string]int{"GatewayClass": 1, "Gateway": 1, "HTTPRoute": 300, "Service": 600, "EndpointSlice": 600}
	if !maps.Equal(kinds, want) {
		t.Errorf("got %v, want %v", kinds, want)
	}
	eps, _, _ := unstructured.NestedSlice(last.Object, "endpoints")
	if got := last.GetName(); got != "svc-299-b-1" || len(eps) != 3 {
		t.Fatalf("last object %s has %d endpoints, want svc-299-b-1 with 3", got, len(eps))
	}
	addr, _, _ := unstructured.NestedStringSlice(eps[2].(map[string]any), "addresses")
	if len(addr) != 1 || addr[0] != "10.1.43.3" {
		t.Errorf("third endpoint of route 299: %v, want [10.1.43.3]", addr)
	}
}

// TestRoute checks that a route without a prefix has a rule without
// matches.
func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		prefix  string
		matches bool
	}{{"/x", true}, {"", false}} {
		r := Route{Namespace: "ns", Name: "r", Gateway: "gw", Hostname: "h.example.com", Prefix: tc.prefix, Service: "s"}
		objs := decode(t, r.String())
		if len(objs) != 1 {
			t.Fatalf("%d objects, want 1", len(objs))
		}
		rules, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "rules")
		_, has := rules[0].(map[string]any)["matches"]
		if len(rules) != 1 || has != tc.matches {
			t.Errorf("prefix %q: rules %v, want one rule with matches: %v", tc.prefix, rules, tc.matches)
		}
	}
}
