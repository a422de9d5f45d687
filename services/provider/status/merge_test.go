package status_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/status"
)

const ours = "gatewire.dev/gatewayclass-controller"

var (
	t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func cond(typ, st, reason string) *busv1.Condition {
	return &busv1.Condition{Type: typ, Status: st, Reason: reason, Message: typ + " " + st}
}

func TestConditionsKeepTransitionTimeWhileStatusHolds(t *testing.T) {
	live := []metav1.Condition{
		{Type: "other.example.com/Thing", Status: "True", Reason: "X", LastTransitionTime: metav1.NewTime(t0)},
		{Type: "Accepted", Status: "True", Reason: "Accepted", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)},
		{Type: "Programmed", Status: "Unknown", Reason: "Pending", LastTransitionTime: metav1.NewTime(t0)},
	}
	got := status.Conditions(live, []*busv1.Condition{
		cond("Accepted", "True", "Accepted"),
		cond("Programmed", "True", "Programmed"),
		cond("ResolvedRefs", "True", "ResolvedRefs"),
	}, 2, t1)
	want := []metav1.Condition{
		live[0], // another party's condition: kept in place
		{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "Accepted True", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(t0)},
		{Type: "Programmed", Status: "True", Reason: "Programmed", Message: "Programmed True", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(t1)},
		{Type: "ResolvedRefs", Status: "True", Reason: "ResolvedRefs", Message: "ResolvedRefs True", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(t1)},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if live[2].Status != "Unknown" {
		t.Error("Conditions modified its input")
	}
}

// routeEntry is a translator entry for route default/r and gateway gw.
func routeEntry(gw string, parents ...*busv1.RouteParentStatus) status.Entry {
	return status.Entry{
		Key:    bus.StatusKey("HTTPRoute", "default", "r", "default", gw),
		Status: &busv1.Status{ObservedGeneration: 3, Parents: parents},
	}
}

func parent(gw string, cs ...*busv1.Condition) *busv1.RouteParentStatus {
	return &busv1.RouteParentStatus{
		ParentRef:      &busv1.ParentRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: "default", Name: gw},
		ControllerName: ours, Conditions: cs,
	}
}

func liveParent(controller, gw string) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{
		ParentRef:      gatewayv1.ParentReference{Namespace: new(gatewayv1.Namespace("default")), Name: gatewayv1.ObjectName(gw)},
		ControllerName: gatewayv1.GatewayController(controller),
		Conditions:     []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", LastTransitionTime: metav1.NewTime(t0)}},
	}
}

func TestRouteParentsMergesEntriesAndKeepsOtherControllers(t *testing.T) {
	live := []gatewayv1.RouteParentStatus{
		liveParent(ours, "gone"), // its entry was deleted
		liveParent("example.com/other", "theirs"),
		liveParent(ours, "b"),
	}
	entries := []status.Entry{
		routeEntry("b", parent("b", cond("Accepted", "True", "Accepted"))),
		routeEntry("a", parent("a", cond("Accepted", "False", "NotAllowedByListeners"))),
	}
	got := status.RouteParents(live, entries, ours, t1)
	names := []string{}
	for _, p := range got {
		names = append(names, string(p.ControllerName)+"/"+string(p.ParentRef.Name))
	}
	want := []string{"example.com/other/theirs", ours + "/a", ours + "/b"}
	if len(names) != len(want) || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Fatalf("parents %v, want %v", names, want)
	}
	if !equality.Semantic.DeepEqual(got[0], live[1]) {
		t.Errorf("the other controller's entry changed: %+v", got[0])
	}
	if lt := got[2].Conditions[0].LastTransitionTime.Time; !lt.Equal(t0) {
		t.Errorf("b's Accepted stayed True but its transition time is %v, want %v", lt, t0)
	}
	if g := got[1].Conditions[0].ObservedGeneration; g != 3 {
		t.Errorf("observedGeneration %d, want the entry's 3", g)
	}
	// The result merged again, later, is the same: nothing to write.
	if again := status.RouteParents(got, entries, ours, t1.Add(time.Hour)); !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("merging again changed the parents:\n got %+v\nwant %+v", again, got)
	}
}

func TestRouteParentsWithoutEntriesRemovesOnlyOurs(t *testing.T) {
	live := []gatewayv1.RouteParentStatus{liveParent(ours, "a"), liveParent("example.com/other", "a")}
	got := status.RouteParents(live, nil, ours, t1)
	if len(got) != 1 || got[0].ControllerName != "example.com/other" {
		t.Errorf("got %+v, want only the other controller's entry", got)
	}
}

func gatewayEntries(programmed string, dataPlane bool) []status.Entry {
	es := []status.Entry{{
		Key: bus.StatusKey("Gateway", "default", "gw", "default", "gw"),
		Status: &busv1.Status{
			ObservedGeneration: 4,
			Conditions:         []*busv1.Condition{cond("Accepted", "True", "Accepted"), cond("Programmed", programmed, "Programmed")},
			Listeners: []*busv1.ListenerStatus{{
				Name: "http", AttachedRoutes: 2,
				SupportedKinds: []*busv1.RouteGroupKind{{Kind: "HTTPRoute"}},
				Conditions:     []*busv1.Condition{cond("Accepted", "True", "Accepted")},
			}},
			Addresses: []string{"10.0.0.1", "gw.example.com"},
		},
	}}
	if dataPlane {
		es = append(es, status.Entry{
			Key: bus.DataPlaneStatusKey("default", "gw", "xds-0"), DataPlane: true,
			Status: &busv1.Status{Conditions: []*busv1.Condition{cond("Programmed", "False", "Invalid")}},
		})
	}
	return es
}

func TestGatewayDataPlaneOverridesProgrammed(t *testing.T) {
	st := status.Gateway(gatewayv1.GatewayStatus{}, gatewayEntries("True", false), t0)
	if len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 2 || *st.Listeners[0].SupportedKinds[0].Group != gatewayv1.GroupName {
		t.Errorf("listeners %+v", st.Listeners)
	}
	if len(st.Addresses) != 2 || *st.Addresses[0].Type != gatewayv1.IPAddressType || *st.Addresses[1].Type != gatewayv1.HostnameAddressType {
		t.Errorf("addresses %+v", st.Addresses)
	}
	rejected := status.Gateway(st, gatewayEntries("True", true), t1)
	p := rejected.Conditions[1]
	if p.Type != "Programmed" || p.Status != "False" || p.Reason != "Invalid" || p.ObservedGeneration != 4 || !p.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("with a data-plane entry, Programmed is %+v; want False, Invalid, generation 4, changed at t1", p)
	}
	if a := rejected.Conditions[0]; !a.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Accepted did not change but moved to %v", a.LastTransitionTime)
	}
	back := status.Gateway(rejected, gatewayEntries("True", false), t1.Add(time.Minute))
	if p := back.Conditions[1]; p.Status != "True" || p.Reason != "Programmed" {
		t.Errorf("without the data-plane entry, Programmed is %+v; want the translator's", p)
	}
	if same := status.Gateway(back, gatewayEntries("True", false), t1.Add(time.Hour)); !equality.Semantic.DeepEqual(same, back) {
		t.Errorf("merging the same entries again changed the status")
	}
}

func TestNoEntriesLeaveGatewayAndClassAlone(t *testing.T) {
	live := gatewayv1.GatewayStatus{Conditions: []metav1.Condition{{Type: "Accepted", Status: "Unknown", Reason: "Pending", LastTransitionTime: metav1.NewTime(t0)}}}
	if got := status.Gateway(live, nil, t1); !equality.Semantic.DeepEqual(got, live) {
		t.Errorf("Gateway without entries: %+v", got)
	}
	class := gatewayv1.GatewayClassStatus{Conditions: live.Conditions}
	if got := status.GatewayClass(class, nil, t1); !equality.Semantic.DeepEqual(got, class) {
		t.Errorf("GatewayClass without entries: %+v", got)
	}
	got := status.GatewayClass(class, []status.Entry{{Status: &busv1.Status{ObservedGeneration: 1, Conditions: []*busv1.Condition{cond("Accepted", "True", "Accepted")}}}}, t1)
	if c := got.Conditions[0]; c.Status != "True" || c.ObservedGeneration != 1 || !c.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("GatewayClass Accepted %+v", c)
	}
}

func TestGatewayInfraAddresses(t *testing.T) {
	entries := append(gatewayEntries("True", false), status.Entry{
		Key:    "Gateway.default.gw.=infra.=infra",
		Infra:  true,
		Status: &busv1.Status{Addresses: []string{"203.0.113.7"}},
	})
	st := status.Gateway(gatewayv1.GatewayStatus{}, entries, t0)
	if len(st.Listeners) != 1 {
		t.Errorf("the infra entry changed the listeners: %+v", st.Listeners)
	}
	if len(st.Conditions) == 0 {
		t.Error("the infra entry removed the translator's conditions")
	}
	if len(st.Addresses) != 1 || st.Addresses[0].Value != "203.0.113.7" {
		t.Errorf("addresses %+v, want the infra service's 203.0.113.7", st.Addresses)
	}
}
