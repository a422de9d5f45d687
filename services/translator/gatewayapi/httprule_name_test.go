package gatewayapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// namesRoute is Services a and b and route "web" of Gateway default/eg,
// whose rules are left to fill in.
const namesRoute = `---
apiVersion: v1
kind: Service
metadata: {name: a, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: default}
spec:
  parentRefs: [{name: eg}]
  rules:
%s`

// namesInput is the class, Gateway default/eg, Services a and b and route
// "web" with the given rules.
func namesInput(rules string) string {
	return gatewaytest.GatewayClass() + gatewaytest.Gateway("default", "eg") + fmt.Sprintf(namesRoute, rules)
}

// The rules of route "web", in the order of the test.
var namesRules = []string{`
  - matches:
    - path: {type: PathPrefix, value: /a}
      headers: [{name: x-a, value: "1"}, {name: x-b, value: "2"}]
    - path: {type: Exact, value: /a/exact}
    backendRefs: [{name: a, port: 80}]`, `
  - name: named
    matches:
    - path: {type: PathPrefix, value: /b}
    filters:
    - type: URLRewrite
      urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}
    backendRefs: [{name: b, port: 80, weight: 2}, {name: a, port: 80}]`, `
  - matches:
    - path: {type: PathPrefix, value: /a}
      headers: [{name: x-a, value: "1"}, {name: x-b, value: "2"}]
    backendRefs: [{name: b, port: 80}]`,
}

// translatedNames translates route "web" with its rules in the given
// order (and the header matches of each match reversed or not), and
// returns what each IR and Envoy route, by name, sends where, and the
// cluster names.
func translatedNames(t *testing.T, order []int, reverseHeaders bool) (ir, envoy map[string]string, clusters []string) {
	t.Helper()
	var rules strings.Builder
	for _, i := range order {
		r := namesRules[i]
		if reverseHeaders {
			r = strings.Replace(r, `[{name: x-a, value: "1"}, {name: x-b, value: "2"}]`, `[{name: x-b, value: "2"}, {name: x-a, value: "1"}]`, 1)
		}
		rules.WriteString(r)
	}
	idx, err := resourcestest.Load(strings.NewReader(namesInput(rules.String())), "names")
	if err != nil {
		t.Fatal(err)
	}
	res := Translate(idx, gatewayclass.DefaultControllerName, types.NamespacedName{Namespace: "default", Name: "eg"})
	ir, envoy = map[string]string{}, map[string]string{}
	for _, vh := range res.IR.GetListeners()[0].GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			ir[r.GetName()] = fmt.Sprint(r.GetAction().GetBackends())
		}
	}
	out, err := xdsgen.Resources(res.IR)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range out[resourcev3.RouteType] {
		for _, vh := range rc.(*routev3.RouteConfiguration).GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				envoy[r.GetName()] = fmt.Sprint(r.GetRoute().GetClusterSpecifier())
			}
		}
	}
	for _, b := range res.IR.GetBackends() {
		clusters = append(clusters, b.GetName())
	}
	return ir, envoy, clusters
}

// TestReorderingRulesKeepsNames checks that reordering the rules of a route
// (or the header matches of a match) renames no route and no cluster, and
// that each name keeps its meaning: Envoy keeps its stats, and no request
// is sent to a cluster that is gone. Rules 0 and 2 have the same match:
// the first of them in the route gets the plain name, the other "-2".
func TestReorderingRulesKeepsNames(t *testing.T) {
	ir, envoy, clusters := translatedNames(t, []int{0, 1, 2}, false)
	// Each of the three PathPrefix matches is two Envoy routes: its exact
	// path ("<name>/exact") and its prefix.
	if len(ir) != 4 || len(envoy) != 7 || len(clusters) != 2 {
		t.Fatalf("got %d IR routes, %d Envoy routes, %d clusters, want 4, 7 and 2:\n%v\n%v\n%v", len(ir), len(envoy), len(clusters), ir, envoy, clusters)
	}
	for _, c := range []struct {
		order   []int
		reverse bool
	}{{[]int{1, 0, 2}, false}, {[]int{0, 2, 1}, false}, {[]int{0, 1, 2}, true}, {[]int{1, 0, 2}, true}} {
		ir2, envoy2, clusters2 := translatedNames(t, c.order, c.reverse)
		if !maps.Equal(ir, ir2) || !maps.Equal(envoy, envoy2) || !slices.Equal(clusters, clusters2) {
			t.Errorf("rules in order %v (headers reversed: %v) renamed routes or clusters:\n%v\n%v\n%v\nwant\n%v\n%v\n%v",
				c.order, c.reverse, ir2, envoy2, clusters2, ir, envoy, clusters)
		}
	}
	ir2, _, clusters2 := translatedNames(t, []int{2, 1, 0}, false)
	if !slices.Equal(slices.Sorted(maps.Keys(ir)), slices.Sorted(maps.Keys(ir2))) || !slices.Equal(clusters, clusters2) {
		t.Errorf("rules in order [2 1 0]: names %v and clusters %v, want %v and %v", slices.Sorted(maps.Keys(ir2)), clusters2, slices.Sorted(maps.Keys(ir)), clusters)
	}
}
