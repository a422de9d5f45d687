package status

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// maxAncestors is the most entries a policy's status.ancestors may hold
// (the CRDs' maxItems).
const maxAncestors = 16

// PolicyAncestors returns a policy's status.ancestors (a BackendTLSPolicy's)
// given live and the policy's entries. The translator writes one entry per
// policy and Gateway, holding the Gateway as ancestor in parents.
//
// The list is a map keyed by ancestorRef and controllerName (Gateway API,
// PolicyStatus): entries of other controllers than controller are kept as
// they are, in place; the entries of controller are exactly those the status
// entries hold, sorted by ancestor reference, each with the conditions of the
// live entry for the same ancestor updated, so an ancestor whose status
// entry was deleted disappears. The list never holds more than 16 entries
// (the CRDs' limit), and a full list takes no new entry: the ancestors of
// controller it already holds stay, and those that do not fit are left out.
//
// The result is never nil: status.ancestors is a required field, so an
// empty list is written as [].
func PolicyAncestors(live []gatewayv1.PolicyAncestorStatus, entries []Entry, controller string, now time.Time) []gatewayv1.PolicyAncestorStatus {
	out := []gatewayv1.PolicyAncestorStatus{}
	for _, a := range live {
		if string(a.ControllerName) != controller {
			out = append(out, *a.DeepCopy())
		}
	}
	ours := ourAncestors(live, entries, controller, now)
	if room := maxAncestors - len(out); len(ours) > room {
		ours = fit(ours, live, max(room, 0))
	}
	return append(out, ours...)
}

// ourAncestors returns the ancestors the entries hold, sorted by ancestor
// reference and without duplicates, each with the conditions of the live
// entry of the same controller and ancestor updated.
func ourAncestors(live []gatewayv1.PolicyAncestorStatus, entries []Entry, controller string, now time.Time) []gatewayv1.PolicyAncestorStatus {
	var ours []gatewayv1.PolicyAncestorStatus
	for _, e := range entries {
		if e.DataPlane || e.Infra {
			continue
		}
		for _, p := range e.Status.GetParents() {
			ref := parentRef(p.GetParentRef())
			ctl := gatewayv1.GatewayController(cmp.Or(p.GetControllerName(), controller))
			var prev []metav1.Condition
			if i := indexAncestor(live, ctl, ref); i >= 0 {
				prev = live[i].Conditions
			}
			ours = append(ours, gatewayv1.PolicyAncestorStatus{
				AncestorRef: ref, ControllerName: ctl,
				Conditions: Conditions(prev, p.GetConditions(), e.Status.GetObservedGeneration(), now),
			})
		}
	}
	slices.SortStableFunc(ours, func(a, b gatewayv1.PolicyAncestorStatus) int {
		return cmp.Compare(parentKey(a.AncestorRef), parentKey(b.AncestorRef))
	})
	return slices.CompactFunc(ours, func(a, b gatewayv1.PolicyAncestorStatus) bool {
		return a.ControllerName == b.ControllerName && parentKey(a.AncestorRef) == parentKey(b.AncestorRef)
	})
}

// fit returns n of ours, in their order: first those live already holds,
// then new ones.
func fit(ours, live []gatewayv1.PolicyAncestorStatus, n int) []gatewayv1.PolicyAncestorStatus {
	keep := make([]bool, len(ours))
	kept := 0
	for _, held := range []bool{true, false} {
		for i, a := range ours {
			if kept < n && !keep[i] && (indexAncestor(live, a.ControllerName, a.AncestorRef) >= 0) == held {
				keep[i] = true
				kept++
			}
		}
	}
	out := make([]gatewayv1.PolicyAncestorStatus, 0, n)
	for i, a := range ours {
		if keep[i] {
			out = append(out, a)
		}
	}
	return out
}

// indexAncestor returns the index of the entry of live for controller and
// ref, or -1.
func indexAncestor(live []gatewayv1.PolicyAncestorStatus, controller gatewayv1.GatewayController, ref gatewayv1.ParentReference) int {
	key := parentKey(ref)
	return slices.IndexFunc(live, func(l gatewayv1.PolicyAncestorStatus) bool {
		return l.ControllerName == controller && parentKey(l.AncestorRef) == key
	})
}
