package conformance

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// listenerSetTests are the suite's ListenerSet tests (feature
// ListenerSet), whose expectations are status conditions.
func listenerSetTests() []conformanceTest {
	ls := func(name string) types.NamespacedName { return nn(infra, name) }
	return []conformanceTest{
		{name: "ListenerSetAllowedNamespaceNone", manifest: "tests/listenerset-allowed-namespace-none.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-does-not-allow-listenerset"), cond{"Accepted", "True", ""}),
			attachedListenerSets(nn(infra, "gateway-does-not-allow-listenerset"), 0),
			listenerSetCondition(ls("listenerset-not-allowed"), notAccepted("NotAllowed")),
			listenerSetCondition(ls("listenerset-not-allowed"), cond{"Programmed", "False", "NotAllowed"}),
		}},
		{name: "ListenerSetDefaultNotAllowed", manifest: "tests/listenerset-default-not-allowed.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-default-does-not-allow-listenerset"), cond{"Accepted", "True", ""}),
			attachedListenerSets(nn(infra, "gateway-default-does-not-allow-listenerset"), 0),
			listenerSetCondition(ls("listenerset-default-not-allowed"), notAccepted("NotAllowed")),
			listenerSetCondition(ls("listenerset-default-not-allowed"), cond{"Programmed", "False", "NotAllowed"}),
		}},
		{name: "ListenerSetAllowedNamespaceSame", manifest: "tests/listenerset-allowed-namespace-same.yaml", checks: []check{
			attachedListenerSets(nn(infra, "gateway-allows-listenerset-in-same-namespace"), 1),
			listenerSetCondition(ls("listenerset-in-same-namespace"), accepted),
			listenerSetCondition(ls("listenerset-in-same-namespace"), cond{"Programmed", "True", "Programmed"}),
			listenerSetListenerConditions(ls("listenerset-in-same-namespace"), []string{"listenerset-in-same-namespace-listener"}, acceptedListener...),
			listenerSetCondition(nn("gateway-api-listenerset-not-allowed-ns", "listenerset-in-different-namespace"), notAccepted("NotAllowed")),
			listenerSetCondition(nn("gateway-api-listenerset-not-allowed-ns", "listenerset-in-different-namespace"), cond{"Programmed", "False", "NotAllowed"}),
		}},
		{name: "ListenerSetAllowedNamespaceSelector", manifest: "tests/listenerset-allowed-namespace-selector.yaml", checks: []check{
			attachedListenerSets(nn(infra, "gateway-allows-listenerset-in-selected-namespace"), 1),
			listenerSetCondition(nn("gateway-api-listenerset-selector-allowed-ns", "listenerset-in-selected-namespace"), accepted),
			listenerSetCondition(nn("gateway-api-listenerset-selector-allowed-ns", "listenerset-in-selected-namespace"), cond{"Programmed", "True", "Programmed"}),
			listenerSetListenerConditions(nn("gateway-api-listenerset-selector-allowed-ns", "listenerset-in-selected-namespace"),
				[]string{"listenerset-in-selected-namespace-listener"}, acceptedListener...),
			listenerSetCondition(nn("gateway-api-listenerset-selector-not-allowed-ns", "listenerset-not-in-selected-namespace"), notAccepted("NotAllowed")),
			listenerSetCondition(nn("gateway-api-listenerset-selector-not-allowed-ns", "listenerset-not-in-selected-namespace"), cond{"Programmed", "False", "NotAllowed"}),
		}},
		{name: "ListenerSetProtocolConflict", manifest: "tests/listenerset-protocol-conflict.yaml",
			checks: conflictChecks("protocol", "ProtocolConflict")},
		{name: "ListenerSetHostnameConflict", manifest: "tests/listenerset-hostname-conflict.yaml",
			checks: conflictChecks("hostname", "HostnameConflict")},
		{name: "ListenerSetAllowedRoutesSupportedKinds", manifest: "tests/listenerset-allowed-routes-supported-kinds.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-with-listener-sets-test-supported-route-kinds"), cond{"Accepted", "True", ""}),
			listenerSetListenerConditions(ls("listenerset-test-allowed-routes-supported-kinds"),
				[]string{"listener-set-listener-allowed-routes-tls-only"}, refsNotResolved("InvalidRouteKinds")),
		}},
		{name: "ListenerSetReferenceGrant", manifest: "tests/listenerset-reference-grant.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-with-listener-sets-test-reference-grant"), cond{"Accepted", "True", ""}),
			listenerSetCondition(ls("listenerset-with-reference-grant"), cond{"Accepted", "True", ""}),
			listenerSetCondition(ls("listenerset-with-reference-grant"), cond{"Programmed", "True", ""}),
			listenerSetListenerConditions(ls("listenerset-with-reference-grant"), []string{"listenerset-with-reference-grant-listener"}, cond{"ResolvedRefs", "True", ""}),
			listenerSetCondition(nn("gateway-api-listener-sets-test-reference-grant-ns", "listenerset-without-reference-grant"), notAccepted("ListenersNotValid")),
			listenerSetCondition(nn("gateway-api-listener-sets-test-reference-grant-ns", "listenerset-without-reference-grant"), cond{"Programmed", "False", "ListenersNotValid"}),
			listenerSetListenerConditions(nn("gateway-api-listener-sets-test-reference-grant-ns", "listenerset-without-reference-grant"),
				[]string{"listenerset-without-reference-grant-listener"}, refsNotResolved("RefNotPermitted")),
		}},
		{name: "ListenerSetHTTPRouting", manifest: "tests/listenerset-http-routing.yaml", checks: []check{
			routesAccepted("HTTPRoute", nn(infra, "gateway-with-listener-sets-http-routing"), nil,
				nn(infra, "attaches-to-all-listeners"), nn(infra, "gateway-route"), nn(infra, "gateway-section-route")),
			attachedListenerSets(nn(infra, "gateway-with-listener-sets-http-routing"), 2),
			listenerSetRoutesAccepted("HTTPRoute", ls("listener-set-http-routing-1"),
				nn(infra, "attaches-to-all-listeners"), nn(infra, "listener-set-http-routing-1-route"), nn(infra, "listener-set-http-routing-1-section-route")),
			listenerSetListeners(ls("listener-set-http-routing-1"),
				listener{name: "listener-set-http-routing-1-listener-1", kinds: []string{"HTTPRoute"}, attached: 3, conds: acceptedListener},
				listener{name: "listener-set-http-routing-1-listener-2", kinds: []string{"HTTPRoute"}, attached: 2, conds: acceptedListener}),
			listenerSetRoutesAccepted("HTTPRoute", ls("listener-set-http-routing-2"),
				nn(infra, "attaches-to-all-listeners"), nn(infra, "listener-set-http-routing-2-route")),
			listenerSetListeners(ls("listener-set-http-routing-2"),
				listener{name: "listener-set-http-routing-2-listener-1", kinds: []string{"HTTPRoute"}, attached: 2, conds: acceptedListener},
				listener{name: "listener-set-http-routing-2-listener-2", kinds: []string{"HTTPRoute"}, attached: 2, conds: acceptedListener}),
		}},
		{name: "ListenerSetGatewayParentSectionNameNotFound", manifest: "tests/listenerset-gateway-parent-section-name-not-found.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-section-name"), cond{"Accepted", "True", ""}),
			attachedListenerSets(nn(infra, "gateway-section-name"), 1),
			listenerSetRoutesAccepted("HTTPRoute", ls("listenerset-section-name"), nn(infra, "route-via-listenerset")),
			routeCondition("HTTPRoute", nn(infra, "route-via-gateway"), nn(infra, "gateway-section-name"), notAccepted("NoMatchingParent")),
		}},
		{name: "ListenerSetRouteStatusScopedToParentRef", manifest: "tests/listenerset-route-status-scoped-to-parentref.yaml", checks: []check{
			attachedListenerSets(nn(infra, "gateway-parentref"), 1),
			listenerSetListeners(ls("listenerset-parentref"),
				listener{name: "listenerset-parentref-listener", kinds: []string{"HTTPRoute"}, attached: 1, conds: acceptedListener}),
			routeParents("HTTPRoute", nn(infra, "route-parentref-gwonly"), "Gateway/"+infra+"/gateway-parentref"),
			listenerSetRoutesAccepted("HTTPRoute", ls("listenerset-parentref"), nn(infra, "route-parentref-lsonly")),
			routeParents("HTTPRoute", nn(infra, "route-parentref-lsonly"), "ListenerSet/"+infra+"/listenerset-parentref"),
		}},
		{name: "ListenerSetDualParentRefIndependence", manifest: "tests/listenerset-dual-parentref-independence.yaml", checks: []check{
			attachedListenerSets(nn(infra, "gateway-dual-parentref"), 1),
			listenerSetListeners(ls("ls-dual-parentref"),
				listener{name: "ls-dual-parentref-listener", kinds: []string{"HTTPRoute"}, attached: 2, conds: acceptedListener}),
			routeCondition("HTTPRoute", nn(infra, "route-dual-parentref-both"), nn(infra, "gateway-dual-parentref"), cond{"Accepted", "True", ""}),
			routeCondition("HTTPRoute", nn(infra, "route-dual-parentref-both"), ls("ls-dual-parentref"), cond{"Accepted", "True", ""}),
			routeCondition("HTTPRoute", nn(infra, "route-dual-parentref-one"), nn(infra, "gateway-dual-parentref"), notAccepted("NoMatchingParent")),
			routeCondition("HTTPRoute", nn(infra, "route-dual-parentref-one"), ls("ls-dual-parentref"), cond{"Accepted", "True", ""}),
			listenerSetRoutesAccepted("HTTPRoute", ls("ls-dual-parentref"), nn(infra, "route-dual-parentref-one")),
		}},
		{name: "ListenerSetAllowedRoutesNamespaces", manifest: "tests/listenerset-allowed-routes-namespaces.yaml", checks: []check{
			gatewayCondition(nn(infra, "gateway-with-listener-sets-test-allowed-routes"), cond{"Accepted", "True", ""}),
			attachedListenerSets(nn(infra, "gateway-with-listener-sets-test-allowed-routes"), 2),
			listenerSetRoutesAccepted("HTTPRoute", ls("listenerset-test-allowed-routes-namespaces"), nn(infra, "route-in-same-namespace"),
				nn("gateway-api-routes-allowed-ns", "route-in-selected-namespace"), nn("gateway-api-routes-not-allowed-ns", "route-not-in-selected-namespace")),
			listenerSetListeners(ls("listenerset-test-allowed-routes-namespaces"),
				listener{name: "listener-set-listener-allowed-routes-all", kinds: []string{"HTTPRoute"}, attached: 3, conds: acceptedListener},
				listener{name: "listener-set-listener-allowed-routes-same", kinds: []string{"HTTPRoute"}, attached: 1, conds: acceptedListener},
				listener{name: "listener-set-listener-allowed-routes-selector", kinds: []string{"HTTPRoute"}, attached: 1, conds: acceptedListener}),
			listenerSetRoutesAccepted("HTTPRoute", nn("gateway-api-ls-cross-ns", "listenerset-test-allowed-routes-cross-ns"),
				nn("gateway-api-ls-cross-ns", "route-in-listenerset-namespace")),
			routeCondition("HTTPRoute", nn(infra, "route-in-gateway-namespace"), nn("gateway-api-ls-cross-ns", "listenerset-test-allowed-routes-cross-ns"),
				notAccepted("NotAllowedByListeners")),
			listenerSetListeners(nn("gateway-api-ls-cross-ns", "listenerset-test-allowed-routes-cross-ns"),
				listener{name: "listener-set-listener-allowed-routes-cross-ns-same", kinds: []string{"HTTPRoute"}, attached: 1, conds: acceptedListener}),
		}},
	}
}

// conflictChecks are the expectations of ListenerSetProtocolConflict and
// ListenerSetHostnameConflict, which share their shape: what is the
// manifests' "protocol" or "hostname", reason the conflict's.
func conflictChecks(what, reason string) []check {
	gw := nn(infra, "gateway-with-listenerset-"+what+"-conflict")
	conflicted := []cond{{"Accepted", "False", reason}, {"Programmed", "False", reason}, {"Conflicted", "True", reason}}
	ls := func(suffix string) types.NamespacedName {
		return nn(infra, "listenerset-with-"+what+"-conflict-with-"+suffix)
	}
	withGateway, withSet := what+"-conflict-with-gateway-listener", what+"-conflict-with-listener-set-listener"
	return []check{
		gatewayCondition(gw, cond{"Accepted", "True", ""}),
		listenerConditions(gw, "gateway-listener", acceptedListener...),
		listenerConditions(gw, withGateway, acceptedListener...),
		attachedListenerSets(gw, 2),
		listenerSetCondition(ls("gateway-1"), cond{"Accepted", "True", ""}),
		listenerSetCondition(ls("gateway-1"), cond{"Programmed", "True", "Programmed"}),
		listenerSetListenerConditions(ls("gateway-1"), []string{"listener-set-1-listener", withSet}, acceptedListener...),
		listenerSetListenerConditions(ls("gateway-1"), []string{withGateway}, conflicted...),
		listenerSetCondition(ls("gateway-2"), notAccepted("ListenersNotValid")),
		listenerSetCondition(ls("gateway-2"), cond{"Programmed", "False", "ListenersNotValid"}),
		listenerSetListenerConditions(ls("gateway-2"), []string{withGateway}, conflicted...),
		listenerSetCondition(ls("listener-set-1"), cond{"Accepted", "True", ""}),
		listenerSetCondition(ls("listener-set-1"), cond{"Programmed", "True", "Programmed"}),
		listenerSetListenerConditions(ls("listener-set-1"), []string{"listener-set-2-listener"}, acceptedListener...),
		listenerSetListenerConditions(ls("listener-set-1"), []string{withSet}, conflicted...),
		listenerSetCondition(ls("listener-set-2"), notAccepted("ListenersNotValid")),
		listenerSetCondition(ls("listener-set-2"), cond{"Programmed", "False", "ListenersNotValid"}),
		listenerSetListenerConditions(ls("listener-set-2"), []string{withSet}, conflicted...),
	}
}

// listenerSetStatus returns the status gatewire gives the ListenerSet ls
// (by whichever gateway), or nil.
func (o *outcome) listenerSetStatus(ls types.NamespacedName) *busv1.Status {
	for _, out := range o.gateways {
		for _, st := range out.Statuses {
			if r := st.GetObject(); r.GetKind() == "ListenerSet" && r.GetNamespace() == ls.Namespace && r.GetName() == ls.Name {
				return st
			}
		}
	}
	return nil
}

// listenerSetCondition is the suite's ListenerSetMustHaveCondition.
func listenerSetCondition(ls types.NamespacedName, want cond) check {
	return objectCondition(objectRef{"ListenerSet", ls.Namespace, ls.Name}, want,
		func(o *outcome) *busv1.Status { return o.listenerSetStatus(ls) })
}

// listenerSetListenerConditions is the suite's
// ListenerSetListenersMustHaveConditions for the listeners names.
func listenerSetListenerConditions(ls types.NamespacedName, names []string, want ...cond) check {
	return check{
		what: fmt.Sprintf("ListenerSet %s listeners %v: %v", ls, names, want),
		verify: func(o *outcome) error {
			st := o.listenerSetStatus(ls)
			if st == nil {
				return fmt.Errorf("ListenerSet %s has no status", ls)
			}
			for _, name := range names {
				l, err := listenerNamed(st.GetListeners(), name)
				if err != nil {
					return err
				}
				if err := conditionsMatch(want, l.GetConditions()); err != nil {
					return fmt.Errorf("listener %s: %w", name, err)
				}
			}
			return nil
		},
	}
}

// listenerSetListeners is the suite's ListenerSetStatusMustHaveListeners.
func listenerSetListeners(ls types.NamespacedName, want ...listener) check {
	return check{
		what: fmt.Sprintf("ListenerSet %s listeners %v", ls, want),
		verify: func(o *outcome) error {
			st := o.listenerSetStatus(ls)
			if st == nil {
				return fmt.Errorf("ListenerSet %s has no status", ls)
			}
			return listenersMatch(want, st.GetListeners())
		},
	}
}

// attachedListenerSets is the suite's GatewayMustHaveAttachedListeners.
func attachedListenerSets(gw types.NamespacedName, want int32) check {
	return check{
		what: fmt.Sprintf("Gateway %s has %d attached ListenerSets", gw, want),
		verify: func(o *outcome) error {
			st := o.gatewayStatus(gw)
			if st == nil {
				return fmt.Errorf("Gateway %s is not translated", gw)
			}
			if got := st.GetAttachedListenerSets(); got != want {
				return fmt.Errorf("attachedListenerSets %d", got)
			}
			return nil
		},
	}
}

// listenerSetRoutesAccepted is the suite's RoutesAndParentMustBeAccepted
// for a ListenerSet parent: each route has an Accepted parent status of
// gatewire for the ListenerSet ls, and every listener of ls is accepted.
func listenerSetRoutesAccepted(kind string, ls types.NamespacedName, routes ...types.NamespacedName) check {
	return check{
		what: fmt.Sprintf("ListenerSet %s and %ss %v accepted", ls, kind, routes),
		verify: func(o *outcome) error {
			for _, route := range routes {
				r := objectRef{kind, route.Namespace, route.Name}
				i := slices.IndexFunc(o.parents[r.key()], func(p *busv1.RouteParentStatus) bool {
					ref := p.GetParentRef()
					return p.GetControllerName() == controller && ref.GetKind() == "ListenerSet" && ref.GetName() == ls.Name &&
						(ref.GetNamespace() == ls.Namespace || ref.GetNamespace() == "" && route.Namespace == ls.Namespace) &&
						findCondition(p.GetConditions(), cond{"Accepted", "True", "Accepted"})
				})
				if i < 0 {
					return fmt.Errorf("%s is not accepted by ListenerSet %s", r, ls)
				}
			}
			st := o.listenerSetStatus(ls)
			if st == nil {
				return fmt.Errorf("ListenerSet %s has no status", ls)
			}
			return listenersAccepted(st.GetListeners())
		},
	}
}

// routeParents is the suite's HTTPRouteMustHaveParents for parents that
// are all Accepted: the route's parent statuses are exactly those of want
// ("<Kind>/<namespace>/<name>"), each Accepted.
func routeParents(kind string, route types.NamespacedName, want ...string) check {
	r := objectRef{kind, route.Namespace, route.Name}
	return check{
		what: fmt.Sprintf("%s has parents %v, accepted", r, want),
		verify: func(o *outcome) error {
			var got []string
			for _, p := range o.parents[r.key()] {
				ref := p.GetParentRef()
				got = append(got, cmp.Or(ref.GetKind(), "Gateway")+"/"+cmp.Or(ref.GetNamespace(), route.Namespace)+"/"+ref.GetName())
				if !findCondition(p.GetConditions(), cond{"Accepted", "True", ""}) {
					return fmt.Errorf("parent %s is not accepted: %s", got[len(got)-1], describe(p.GetConditions()))
				}
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("parents %v", got)
			}
			return nil
		},
	}
}
