package conformance

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// listener is an expected listener status; kinds are route kinds of the
// Gateway API group, and no kind means the listener must support none (the
// suite's rule for an empty SupportedKinds).
type listener struct {
	name     string
	kinds    []string
	attached int32
	conds    []cond
}

// gatewayListeners is the suite's GatewayStatusMustHaveListeners.
func gatewayListeners(gw types.NamespacedName, want ...listener) check {
	return check{
		what: fmt.Sprintf("Gateway %s listeners %v", gw, want),
		verify: func(o *outcome) error {
			st := o.gatewayStatus(gw)
			if st == nil {
				return fmt.Errorf("Gateway %s is not translated", gw)
			}
			return listenersMatch(want, st.GetListeners())
		},
	}
}

// listenersMatch mirrors the suite's gatewayListenersMatch: got holds
// exactly the listeners of want, each matching.
func listenersMatch(want []listener, got []*busv1.ListenerStatus) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d listener statuses, want %d", len(got), len(want))
	}
	for _, w := range want {
		l, err := listenerNamed(got, w.name)
		if err != nil {
			return err
		}
		if err := listenerMatches(w, l); err != nil {
			return fmt.Errorf("listener %s: %w", w.name, err)
		}
	}
	return nil
}

// listenerNamed returns the status of the listener name in ls.
func listenerNamed(ls []*busv1.ListenerStatus, name string) (*busv1.ListenerStatus, error) {
	i := slices.IndexFunc(ls, func(l *busv1.ListenerStatus) bool { return l.GetName() == name })
	if i < 0 {
		return nil, fmt.Errorf("no status for listener %s", name)
	}
	return ls[i], nil
}

// acceptedListener is the suite's generateAcceptedListenerConditions.
var acceptedListener = []cond{{"ResolvedRefs", "True", ""}, {"Accepted", "True", ""}, {"Programmed", "True", ""}}

// listenersAccepted reports the first listener of ls that is not
// ResolvedRefs, Accepted and Programmed.
func listenersAccepted(ls []*busv1.ListenerStatus) error {
	for _, l := range ls {
		if err := conditionsMatch(acceptedListener, l.GetConditions()); err != nil {
			return fmt.Errorf("listener %s: %w", l.GetName(), err)
		}
	}
	return nil
}

// listenerConditions is the suite's GatewayListenerMustHaveConditions: the
// listener name of gw has every condition of want.
func listenerConditions(gw types.NamespacedName, name string, want ...cond) check {
	return check{
		what: fmt.Sprintf("Gateway %s listener %s: %v", gw, name, want),
		verify: func(o *outcome) error {
			st := o.gatewayStatus(gw)
			if st == nil {
				return fmt.Errorf("Gateway %s is not translated", gw)
			}
			l, err := listenerNamed(st.GetListeners(), name)
			if err != nil {
				return err
			}
			return conditionsMatch(want, l.GetConditions())
		},
	}
}

// listenerMatches mirrors the suite's gatewayListenersMatch for one listener.
func listenerMatches(want listener, got *busv1.ListenerStatus) error {
	kinds := got.GetSupportedKinds()
	if len(want.kinds) == 0 && len(kinds) != 0 {
		return fmt.Errorf("supportedKinds %v, want none", kindNames(kinds))
	}
	for _, k := range want.kinds {
		if !slices.ContainsFunc(kinds, func(g *busv1.RouteGroupKind) bool {
			return (g.GetGroup() == "" || g.GetGroup() == "gateway.networking.k8s.io") && g.GetKind() == k
		}) {
			return fmt.Errorf("supportedKinds %v lacks %s", kindNames(kinds), k)
		}
	}
	if got.GetAttachedRoutes() != want.attached {
		return fmt.Errorf("attachedRoutes %d, want %d", got.GetAttachedRoutes(), want.attached)
	}
	return conditionsMatch(want.conds, got.GetConditions())
}

func kindNames(kinds []*busv1.RouteGroupKind) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.GetKind())
	}
	return out
}

// routesAccepted is the suite's Gateway<Kind>RoutesMustBeAccepted without
// the address: every route has an Accepted parent status for gw (one per
// listener name given, none meaning the whole Gateway) written by gatewire,
// and every listener of gw is ResolvedRefs, Accepted and Programmed.
func routesAccepted(kind string, gw types.NamespacedName, sections []string, routes ...types.NamespacedName) check {
	if len(sections) == 0 {
		sections = []string{""}
	}
	return check{
		what: fmt.Sprintf("Gateway %s and %ss %v accepted", gw, kind, routes),
		verify: func(o *outcome) error {
			for _, route := range routes {
				r := objectRef{kind, route.Namespace, route.Name}
				for range sections {
					if err := acceptedParent(o, r, gw); err != nil {
						return err
					}
				}
			}
			st := o.gatewayStatus(gw)
			if st == nil {
				return fmt.Errorf("Gateway %s is not translated", gw)
			}
			return listenersAccepted(st.GetListeners())
		},
	}
}

// acceptedParent mirrors the suite's parentsForRouteMatch for one expected
// parent: gatewire's controller, a Gateway of the Gateway API group named gw
// (its namespace may be left out only when the route is in gw's namespace),
// and Accepted True with reason Accepted.
func acceptedParent(o *outcome, r objectRef, gw types.NamespacedName) error {
	var seen []string
	for _, p := range o.parents[r.key()] {
		ref := p.GetParentRef()
		switch {
		case p.GetControllerName() != controller,
			ref.GetGroup() != "" && ref.GetGroup() != "gateway.networking.k8s.io",
			ref.GetKind() != "" && ref.GetKind() != "Gateway",
			ref.GetName() != gw.Name,
			ref.GetNamespace() != gw.Namespace && (r.namespace != gw.Namespace || ref.GetNamespace() != ""):
			continue
		}
		if findCondition(p.GetConditions(), cond{"Accepted", "True", "Accepted"}) {
			return nil
		}
		seen = append(seen, describe(p.GetConditions()))
	}
	return fmt.Errorf("%s is not accepted by %s: %v", r, gw.Name, seen)
}
