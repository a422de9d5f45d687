package status

import (
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
	ours := policyAncestors.ours(live, entries, controller, now)
	if room := maxAncestors - len(out); len(ours) > room {
		ours = fit(ours, live, max(room, 0))
	}
	return append(out, ours...)
}

// policyAncestors is a policy's status.ancestors.
var policyAncestors = parentList[gatewayv1.PolicyAncestorStatus]{
	key: func(a gatewayv1.PolicyAncestorStatus) (gatewayv1.GatewayController, gatewayv1.ParentReference) {
		return a.ControllerName, a.AncestorRef
	},
	conditions: func(a gatewayv1.PolicyAncestorStatus) []metav1.Condition { return a.Conditions },
	entry: func(ctl gatewayv1.GatewayController, ref gatewayv1.ParentReference, cs []metav1.Condition) gatewayv1.PolicyAncestorStatus {
		return gatewayv1.PolicyAncestorStatus{AncestorRef: ref, ControllerName: ctl, Conditions: cs}
	},
}

// fit returns n of ours, in their order: first those live already holds,
// then new ones.
func fit(ours, live []gatewayv1.PolicyAncestorStatus, n int) []gatewayv1.PolicyAncestorStatus {
	keep := make([]bool, len(ours))
	kept := 0
	for _, held := range []bool{true, false} {
		for i, a := range ours {
			if kept < n && !keep[i] && (policyAncestors.index(live, a.ControllerName, a.AncestorRef) >= 0) == held {
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
