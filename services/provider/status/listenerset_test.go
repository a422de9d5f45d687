package status_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/status"
)

func TestListenerSetTakesTheConditionsAndListenersOfItsEntry(t *testing.T) {
	live := gatewayv1.ListenerSetStatus{
		Conditions: []metav1.Condition{{Type: "Accepted", Status: "Unknown", Reason: "Pending", LastTransitionTime: metav1.NewTime(t0)}},
		Listeners: []gatewayv1.ListenerEntryStatus{{Name: "https", Conditions: []metav1.Condition{
			{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.NewTime(t0)}}}},
	}
	entry := status.Entry{
		Key: bus.StatusKey("ListenerSet", "team", "ls", "infra", "gw"),
		Status: &busv1.Status{ObservedGeneration: 2,
			Conditions: []*busv1.Condition{cond("Accepted", "True", "Accepted"), cond("Programmed", "True", "Programmed")},
			Listeners: []*busv1.ListenerStatus{{Name: "https", AttachedRoutes: 3,
				SupportedKinds: []*busv1.RouteGroupKind{{Kind: "HTTPRoute"}},
				Conditions:     []*busv1.Condition{cond("Accepted", "True", "Accepted")}}}},
	}
	got := status.ListenerSet(live, []status.Entry{entry}, t1)
	if len(got.Conditions) != 2 || got.Conditions[0].Status != "True" || got.Conditions[0].ObservedGeneration != 2 ||
		!got.Conditions[0].LastTransitionTime.Equal(&metav1.Time{Time: t1}) {
		t.Errorf("conditions = %+v, want Accepted True since t1, then Programmed", got.Conditions)
	}
	if len(got.Listeners) != 1 || got.Listeners[0].AttachedRoutes != 3 || *got.Listeners[0].SupportedKinds[0].Group != gatewayv1.GroupName {
		t.Fatalf("listeners = %+v, want https with 3 routes and the default group", got.Listeners)
	}
	if c := got.Listeners[0].Conditions[0]; !c.LastTransitionTime.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("the listener's Accepted moved to %v, though it stayed True", c.LastTransitionTime)
	}
	if live.Conditions[0].Status != "Unknown" {
		t.Error("ListenerSet modified its input")
	}
	if same := status.ListenerSet(live, nil, t1); len(same.Conditions) != 1 || same.Conditions[0].Status != "Unknown" {
		t.Errorf("with no entry got %+v, want live", same.Conditions)
	}
}

func TestGatewayTakesItsAttachedListenerSets(t *testing.T) {
	n := int32(2)
	gw := func(attached *int32) status.Entry {
		return status.Entry{Key: bus.StatusKey("Gateway", "infra", "gw", "infra", "gw"),
			Status: &busv1.Status{ObservedGeneration: 1, AttachedListenerSets: attached}}
	}
	got := status.Gateway(gatewayv1.GatewayStatus{}, []status.Entry{gw(&n)}, t1)
	if got.AttachedListenerSets == nil || *got.AttachedListenerSets != 2 {
		t.Fatalf("attachedListenerSets = %v, want 2", got.AttachedListenerSets)
	}
	if got = status.Gateway(got, []status.Entry{gw(nil)}, t1); got.AttachedListenerSets != nil {
		t.Errorf("attachedListenerSets = %d, want it left out once the entry leaves it out", *got.AttachedListenerSets)
	}
}
