package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// The checks below mirror the conformance suite's helpers
// (conformance/utils/kubernetes/helpers.go) on gatewire's statuses: same
// matching rules, same "any reason" for an empty reason. What the suite
// checks on a cluster and an offline translation cannot give is left out:
// Gateway addresses (the infra service assigns them) and HTTP traffic.

// objectRef names an object of the suite.
type objectRef struct{ kind, namespace, name string }

func (r objectRef) key() string    { return objectKey(r.kind, r.namespace, r.name) }
func (r objectRef) String() string { return r.kind + " " + r.namespace + "/" + r.name }

// cond is an expected condition; an empty reason matches any reason.
type cond struct{ typ, status, reason string }

func (c cond) String() string {
	return c.typ + "=" + c.status + cmp.Or("/"+c.reason, "")
}

// check is one expectation of a conformance test.
type check struct {
	what   string
	verify func(o *outcome) error
}

// findCondition mirrors the suite's findConditionInList.
func findCondition(cs []*busv1.Condition, want cond) bool {
	return slices.ContainsFunc(cs, func(c *busv1.Condition) bool {
		return c.GetType() == want.typ && (want.status == "" || c.GetStatus() == want.status) &&
			(want.reason == "" || c.GetReason() == want.reason)
	})
}

// conditionsMatch mirrors the suite's conditionsMatch.
func conditionsMatch(want []cond, got []*busv1.Condition) error {
	for _, w := range want {
		if !findCondition(got, w) {
			return fmt.Errorf("no %s in %s", w, describe(got))
		}
	}
	return nil
}

// describe lists conditions as type=status/reason.
func describe(cs []*busv1.Condition) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, cond{c.GetType(), c.GetStatus(), c.GetReason()}.String())
	}
	return "[" + strings.Join(out, " ") + "]"
}

// stale returns an error when a condition does not have the object's
// generation as observedGeneration (the suite's
// ConditionsHaveLatestObservedGeneration).
func stale(o *outcome, ref objectRef, cs []*busv1.Condition) error {
	want := o.generations[ref.key()]
	for _, c := range cs {
		if c.GetObservedGeneration() != want {
			return fmt.Errorf("%s: condition %s has observedGeneration %d, want %d", ref, c.GetType(), c.GetObservedGeneration(), want)
		}
	}
	return nil
}

// parentsFor returns the route's parent statuses for the Gateway gw: those
// whose parentRef names gw, its namespace given or not.
func parentsFor(o *outcome, route objectRef, gw types.NamespacedName) []*busv1.RouteParentStatus {
	var out []*busv1.RouteParentStatus
	for _, p := range o.parents[route.key()] {
		ref := p.GetParentRef()
		if ref.GetName() == gw.Name && (ref.GetNamespace() == "" || ref.GetNamespace() == gw.Namespace) {
			out = append(out, p)
		}
	}
	return out
}

// routeCondition is the suite's HTTPRouteMustHaveCondition (and its
// TCPRoute, UDPRoute and TLSRoute twins).
func routeCondition(kind string, route, gw types.NamespacedName, want cond) check {
	r := objectRef{kind, route.Namespace, route.Name}
	return check{
		what: fmt.Sprintf("%s on %s: %s", r, gw.Name, want),
		verify: func(o *outcome) error {
			for _, p := range o.parents[r.key()] {
				if err := stale(o, r, p.GetConditions()); err != nil {
					return err
				}
			}
			var seen []string
			for _, p := range parentsFor(o, r, gw) {
				if findCondition(p.GetConditions(), want) {
					return nil
				}
				seen = append(seen, describe(p.GetConditions()))
			}
			return fmt.Errorf("%s has %v for %s", r, cmp.Or(strings.Join(seen, " "), "no status"), gw.Name)
		},
	}
}

// routeNoAcceptedParents is the suite's HTTPRouteMustHaveNoAcceptedParents:
// no parent status, or a single one that is not Accepted.
func routeNoAcceptedParents(kind string, route types.NamespacedName) check {
	r := objectRef{kind, route.Namespace, route.Name}
	return check{
		what: fmt.Sprintf("%s has no accepted parent", r),
		verify: func(o *outcome) error {
			ps := o.parents[r.key()]
			switch {
			case len(ps) == 0:
				return nil
			case len(ps) > 1:
				return fmt.Errorf("%s has %d parent statuses", r, len(ps))
			}
			return conditionsMatch([]cond{{"Accepted", "False", ""}}, ps[0].GetConditions())
		},
	}
}

// gatewayCondition is the suite's GatewayMustHaveCondition.
func gatewayCondition(gw types.NamespacedName, want cond) check {
	return objectCondition(objectRef{"Gateway", gw.Namespace, gw.Name}, want,
		func(o *outcome) *busv1.Status { return o.gatewayStatus(gw) })
}

// objectCondition is the suite's <Kind>MustHaveCondition: the status of r,
// which status returns (nil when there is none), has the condition want,
// of r's latest generation.
func objectCondition(r objectRef, want cond, status func(*outcome) *busv1.Status) check {
	return check{
		what: fmt.Sprintf("%s: %s", r, want),
		verify: func(o *outcome) error {
			st := status(o)
			if st == nil {
				return fmt.Errorf("%s has no status", r)
			}
			if err := stale(o, r, st.GetConditions()); err != nil {
				return err
			}
			return conditionsMatch([]cond{want}, st.GetConditions())
		},
	}
}

// gatewayZeroRoutes is the suite's GatewayMustHaveZeroRoutes: no listener
// status, or a single one with no attached route.
func gatewayZeroRoutes(gw types.NamespacedName) check {
	return check{
		what: fmt.Sprintf("Gateway %s has no attached route", gw),
		verify: func(o *outcome) error {
			st := o.gatewayStatus(gw)
			if st == nil {
				return fmt.Errorf("Gateway %s is not translated", gw)
			}
			ls := st.GetListeners()
			if len(ls) == 0 || len(ls) == 1 && ls[0].GetAttachedRoutes() == 0 {
				return nil
			}
			var got []string
			for _, l := range ls {
				got = append(got, fmt.Sprintf("%s:%d", l.GetName(), l.GetAttachedRoutes()))
			}
			return fmt.Errorf("listeners and attached routes %v", got)
		},
	}
}

// latestGeneration is the suite's <Kind>MustHaveLatestConditions.
func latestGeneration(ref objectRef) check {
	return check{
		what: fmt.Sprintf("%s conditions have its latest generation", ref),
		verify: func(o *outcome) error {
			var cs []*busv1.Condition
			switch ref.kind {
			case "GatewayClass":
				cs = o.classes[ref.name].GetConditions()
			case "Gateway":
				cs = o.gatewayStatus(types.NamespacedName{Namespace: ref.namespace, Name: ref.name}).GetConditions()
			default:
				for _, p := range o.parents[ref.key()] {
					cs = append(cs, p.GetConditions()...)
				}
			}
			if len(cs) == 0 {
				return fmt.Errorf("%s has no condition", ref)
			}
			return stale(o, ref, cs)
		},
	}
}

// controller is the controllerName gatewire writes in route statuses.
const controller = gatewayclass.DefaultControllerName

// classCondition is the suite's GWCMustHaveAccepted... on a GatewayClass.
func classCondition(name string, want cond) check {
	return check{
		what: fmt.Sprintf("GatewayClass %s: %s", name, want),
		verify: func(o *outcome) error {
			st := o.classes[name]
			if st == nil {
				return fmt.Errorf("GatewayClass %s is not translated", name)
			}
			return conditionsMatch([]cond{want}, st.GetConditions())
		},
	}
}
