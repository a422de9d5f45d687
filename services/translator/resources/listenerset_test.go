package resources

import "testing"

const (
	listenerSetYAML = `{apiVersion: gateway.networking.k8s.io/v1, kind: ListenerSet, metadata: {name: ls, namespace: app},
  spec: {parentRef: {name: GW, namespace: infra}, listeners: [{name: https, protocol: HTTPS, port: 443,
    tls: {certificateRefs: [{name: cert}, {name: shared, namespace: certs}]}}]}}`
	routeToListenerSet = `{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: r, namespace: app},
  spec: {parentRefs: [{kind: ListenerSet, group: gateway.networking.k8s.io, name: ls}], rules: [{backendRefs: [{name: svc, port: 80}]}]}}`
)

func TestListenerSetsBelongToTheirGateway(t *testing.T) {
	x := NewIndex()
	gw1, gw2 := nn("infra", "gw1"), nn("infra", "gw2")
	apply(t, x, gw1YAML)
	apply(t, x, gw2YAML)
	wantGateways(t, "a route to a ListenerSet not there yet", apply(t, x, routeToListenerSet))
	wantGateways(t, "the ListenerSet", apply(t, x, fill(listenerSetYAML, "GW", "gw1")), gw1)
	if got := x.HTTPRoutesFor(gw1); len(got) != 1 || got[0].Name != "r" {
		t.Errorf("HTTPRoutesFor(gw1) = %v, want the route of the ListenerSet", got)
	}
	if got := x.ListenerSetsFor(gw1); len(got) != 1 || got[0].Name != "ls" {
		t.Errorf("ListenerSetsFor(gw1) = %v, want ls", got)
	}
	wantGateways(t, "its route's backend", apply(t, x, svcYAML), gw1)
	wantGateways(t, "its certificate", apply(t, x, fill(secretYAML, "NAME", "cert", "NS", "app")), gw1)
	wantGateways(t, "a grant for its other certificate",
		apply(t, x, fill(grantYAML, "NS", "certs", "KIND", "ListenerSet", "FROM", "app", "TO", "Secret")), gw1)
	wantGateways(t, "the ListenerSet moving to gw2", apply(t, x, fill(listenerSetYAML, "GW", "gw2")), gw1, gw2)
	if got := x.HTTPRoutesFor(gw1); len(got) != 0 {
		t.Errorf("HTTPRoutesFor(gw1) = %v, want none once the ListenerSet moved", got)
	}
	wantGateways(t, "its route", apply(t, x, routeToListenerSet), gw2)
	wantGateways(t, "removing the ListenerSet", x.Remove(KindListenerSet, "app", "ls"), gw2)
	wantGateways(t, "its route, with no ListenerSet", apply(t, x, routeToListenerSet))
	if x.ListenerSet(nn("app", "ls")) != nil || len(x.HTTPRoutesFor(gw2)) != 0 {
		t.Error("the removed ListenerSet is still in the index")
	}
}

func TestRouteToAGatewayAndItsListenerSetIsListedOnce(t *testing.T) {
	x := NewIndex()
	apply(t, x, fill(listenerSetYAML, "GW", "gw1"))
	apply(t, x, `{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: both, namespace: app},
  spec: {parentRefs: [{name: gw1, namespace: infra}, {kind: ListenerSet, name: ls}]}}`)
	if got := x.HTTPRoutesFor(nn("infra", "gw1")); len(got) != 1 {
		t.Errorf("HTTPRoutesFor = %d routes, want the route once", len(got))
	}
}
