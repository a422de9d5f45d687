package resources

import (
	"slices"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"k8s.io/apimachinery/pkg/types"
)

func nn(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

// mustResource decodes one YAML object.
func mustResource(t *testing.T, y string) *busv1.Resource {
	t.Helper()
	rs, err := manifest.ReadResourcesWith(strings.NewReader(y), "test", manifest.Options{KeepRefused: true})
	if err != nil || len(rs) != 1 {
		t.Fatalf("decode %q: %v (%d objects)", y, err, len(rs))
	}
	return rs[0]
}

func apply(t *testing.T, x *Index, y string) Change {
	t.Helper()
	c, err := x.Apply(mustResource(t, y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantGateways(t *testing.T, what string, c Change, want ...types.NamespacedName) {
	t.Helper()
	if !slices.Equal(c.Gateways, want) {
		t.Errorf("%s affects gateways %v, want %v", what, c.Gateways, want)
	}
}

const (
	classYAML = `{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: gc}, spec: {controllerName: x}}`
	gw1YAML   = `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw1, namespace: infra}, spec: {gatewayClassName: gc}}`
	gw2YAML   = `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw2, namespace: infra}, spec: {gatewayClassName: gc}}`
	routeTo   = `{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: r, namespace: app},
  spec: {parentRefs: [{name: GW, namespace: infra}], rules: [{backendRefs: [{name: svc, port: 80}]}]}}`
	svcYAML   = `{apiVersion: v1, kind: Service, metadata: {name: svc, namespace: app}}`
	otherSvc  = `{apiVersion: v1, kind: Service, metadata: {name: other, namespace: app}}`
	sliceOf   = `{apiVersion: discovery.k8s.io/v1, kind: EndpointSlice, metadata: {name: s1, namespace: app, labels: {kubernetes.io/service-name: SVC}}, addressType: IPv4}`
	namespace = `{apiVersion: v1, kind: Namespace, metadata: {name: app, labels: {team: a}}}`
)

func TestChangesAffectTheRightGateways(t *testing.T) {
	x := NewIndex()
	gw1, gw2 := nn("infra", "gw1"), nn("infra", "gw2")

	wantGateways(t, "a new gateway", apply(t, x, gw1YAML), gw1)
	apply(t, x, gw2YAML)
	c := apply(t, x, classYAML)
	wantGateways(t, "its class", c, gw1, gw2)
	if !slices.Equal(c.GatewayClasses, []string{"gc"}) {
		t.Errorf("class change affects classes %v, want [gc]", c.GatewayClasses)
	}

	wantGateways(t, "a route to gw1", apply(t, x, strings.Replace(routeTo, "GW", "gw1", 1)), gw1)
	wantGateways(t, "moving the route to gw2", apply(t, x, strings.Replace(routeTo, "GW", "gw2", 1)), gw1, gw2)
	wantGateways(t, "its backend Service", apply(t, x, svcYAML), gw2)
	wantGateways(t, "an unrelated Service", apply(t, x, otherSvc))
	wantGateways(t, "a slice of its Service", apply(t, x, strings.Replace(sliceOf, "SVC", "svc", 1)), gw2)
	wantGateways(t, "the slice moving to another Service", apply(t, x, strings.Replace(sliceOf, "SVC", "other", 1)), gw2)
	wantGateways(t, "the slice, now of another Service", apply(t, x, strings.Replace(sliceOf, "SVC", "other", 1)))
	wantGateways(t, "a namespace", apply(t, x, namespace), gw1, gw2)

	wantGateways(t, "removing the route", x.Remove(KindHTTPRoute, "app", "r"), gw2)
	wantGateways(t, "removing a gateway", x.Remove(KindGateway, "infra", "gw1"), gw1)
	wantGateways(t, "removing the class", x.Remove(KindGatewayClass, "", "gc"), gw2)
	if c := x.Remove("Pod", "app", "s"); !c.Empty() {
		t.Errorf("removing an unknown kind affects %+v", c)
	}
}

func TestLookups(t *testing.T) {
	x := NewIndex()
	for _, name := range []string{"b", "a", "c"} {
		apply(t, x, strings.Replace(strings.Replace(routeTo, "GW", "gw1", 1), "name: r,", "name: "+name+",", 1))
	}
	apply(t, x, strings.Replace(sliceOf, "SVC", "svc", 1))
	var names []string
	for _, r := range x.HTTPRoutesFor(nn("infra", "gw1")) {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("HTTPRoutesFor = %v, want [a b c]", names)
	}
	if got := x.EndpointSlicesFor(nn("app", "svc")); len(got) != 1 || got[0].Name != "s1" {
		t.Errorf("EndpointSlicesFor = %v, want [s1]", got)
	}
	if got := x.HTTPRoutesFor(nn("infra", "none")); len(got) != 0 {
		t.Errorf("HTTPRoutesFor a gateway nobody names = %v", got)
	}
}

func TestApplyIgnoresAndReports(t *testing.T) {
	x := NewIndex()
	if c, err := x.Apply(&busv1.Resource{Kind: "Pod", Namespace: "a", Name: "p", Object: []byte("{}")}); err != nil || !c.Empty() {
		t.Errorf("unknown kind: %+v, %v; want nothing", c, err)
	}
	if c, err := x.Apply(&busv1.Resource{Group: "networking.istio.io", Kind: "Gateway", Namespace: "a", Name: "g", Object: []byte("{}")}); err != nil || !c.Empty() || x.Gateway(nn("a", "g")) != nil {
		t.Errorf("a Gateway of another group: %+v, %v; want it ignored", c, err)
	}
	apply(t, x, gw1YAML)
	bad := &busv1.Resource{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "infra", Name: "gw1", Object: []byte(`{"spec": 7}`)}
	_, err := x.Apply(bad)
	if err == nil || !strings.Contains(err.Error(), "Gateway infra/gw1") {
		t.Errorf("undecodable object: err %v, want one naming Gateway infra/gw1", err)
	}
	if g := x.Gateway(nn("infra", "gw1")); g == nil || g.Spec.GatewayClassName != "gc" {
		t.Errorf("after a bad update the gateway is %v, want the last good one", g)
	}
}
