package status

import (
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// ListenerSet returns the status of a ListenerSet given live and its
// entries. The translator's entry (the one its parent Gateway gives, normally
// the only one) sets the conditions and the listeners, each listener's
// conditions merged with the live listener of the same name, as for a
// Gateway. With no entry, live is returned.
func ListenerSet(live gatewayv1.ListenerSetStatus, entries []Entry, now time.Time) gatewayv1.ListenerSetStatus {
	out := *live.DeepCopy()
	for _, e := range entries {
		if e.DataPlane || e.Infra {
			continue
		}
		st := e.Status
		out.Conditions = Conditions(out.Conditions, st.GetConditions(), st.GetObservedGeneration(), now)
		out.Listeners = listenerEntries(live.Listeners, st.GetListeners(), st.GetObservedGeneration(), now)
	}
	return out
}

// listenerEntries is listeners for the listener statuses of a ListenerSet,
// which have the fields of a Gateway's.
func listenerEntries(live []gatewayv1.ListenerEntryStatus, want []*busv1.ListenerStatus, generation int64, now time.Time) []gatewayv1.ListenerEntryStatus {
	prev := make([]gatewayv1.ListenerStatus, len(live))
	for i, l := range live {
		prev[i] = gatewayv1.ListenerStatus(l)
	}
	merged := listeners(prev, want, generation, now)
	out := make([]gatewayv1.ListenerEntryStatus, len(merged))
	for i, l := range merged {
		out[i] = gatewayv1.ListenerEntryStatus(l)
	}
	return out
}

// attachedListenerSets returns the Gateway's status.attachedListenerSets
// from the translator's entry: nil when the entry leaves it out.
func attachedListenerSets(st *busv1.Status) *int32 {
	if st.AttachedListenerSets == nil {
		return nil
	}
	n := st.GetAttachedListenerSets()
	return &n
}
