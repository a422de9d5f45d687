package status_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/status"
)

// policyEntry is the translator's entry for BackendTLSPolicy default/p and
// gateway gw, at generation 5.
func policyEntry(gw string, cs ...*busv1.Condition) status.Entry {
	return status.Entry{
		Key:    bus.StatusKey("BackendTLSPolicy", "default", "p", "default", gw),
		Status: &busv1.Status{ObservedGeneration: 5, Parents: []*busv1.RouteParentStatus{parent(gw, cs...)}},
	}
}

func liveAncestor(controller, gw string) gatewayv1.PolicyAncestorStatus {
	group, kind := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway")
	return gatewayv1.PolicyAncestorStatus{
		AncestorRef: gatewayv1.ParentReference{Group: &group, Kind: &kind,
			Namespace: new(gatewayv1.Namespace("default")), Name: gatewayv1.ObjectName(gw)},
		ControllerName: gatewayv1.GatewayController(controller),
		Conditions:     []metav1.Condition{{Type: "Accepted", Status: "True", Reason: "Accepted", ObservedGeneration: 5, LastTransitionTime: metav1.NewTime(t0)}},
	}
}

// ancestorNames returns "<controller>/<gateway>" per entry.
func ancestorNames(as []gatewayv1.PolicyAncestorStatus) string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.ControllerName)+"/"+string(a.AncestorRef.Name))
	}
	return fmt.Sprint(out)
}

func TestPolicyAncestorsMergesGatewaysAndKeepsOtherControllers(t *testing.T) {
	live := []gatewayv1.PolicyAncestorStatus{
		liveAncestor(ours, "gone"), // its entry was deleted
		liveAncestor("example.com/other", "b"),
		liveAncestor(ours, "b"),
	}
	entries := []status.Entry{
		policyEntry("b", cond("Accepted", "True", "Accepted"), cond("ResolvedRefs", "True", "ResolvedRefs")),
		policyEntry("a", cond("Accepted", "False", "Conflicted"), cond("ResolvedRefs", "True", "ResolvedRefs")),
	}
	got := status.PolicyAncestors(live, entries, ours, t1)
	if names, want := ancestorNames(got), fmt.Sprint([]string{"example.com/other/b", ours + "/a", ours + "/b"}); names != want {
		t.Fatalf("ancestors %s, want %s", names, want)
	}
	if !equality.Semantic.DeepEqual(got[0], live[1]) {
		t.Errorf("the other controller's entry changed: %+v", got[0])
	}
	if a := got[1].AncestorRef; *a.Group != gatewayv1.GroupName || *a.Kind != "Gateway" || *a.Namespace != "default" {
		t.Errorf("ancestorRef %+v, want the Gateway default/a", a)
	}
	if c := got[1].Conditions[0]; c.Reason != "Conflicted" || c.ObservedGeneration != 5 || !c.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("a's Accepted %+v, want Conflicted at generation 5, set at t1", c)
	}
	if c := got[2].Conditions[0]; !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("b's Accepted stayed True but its transition time is %v, want %v", c.LastTransitionTime, t0)
	}
	if again := status.PolicyAncestors(got, entries, ours, t1.Add(time.Hour)); !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("merging again changed the ancestors:\n got %+v\nwant %+v", again, got)
	}
}

func TestPolicyAncestorsWithoutEntriesIsAnEmptyList(t *testing.T) {
	got := status.PolicyAncestors([]gatewayv1.PolicyAncestorStatus{liveAncestor(ours, "a")}, nil, ours, t1)
	if got == nil || len(got) != 0 {
		t.Errorf("got %#v, want an empty, non-nil list (ancestors is required)", got)
	}
	if got := status.PolicyAncestors(nil, nil, ours, t1); got == nil {
		t.Error("got nil for no live status and no entries, want an empty list")
	}
}

func TestPolicyAncestorsFullListTakesNoNewEntry(t *testing.T) {
	var live []gatewayv1.PolicyAncestorStatus
	for i := range 14 {
		live = append(live, liveAncestor("example.com/other", fmt.Sprintf("o%02d", i)))
	}
	live = append(live, liveAncestor(ours, "z"))
	entries := []status.Entry{
		policyEntry("a", cond("Accepted", "True", "Accepted")),
		policyEntry("b", cond("Accepted", "True", "Accepted")),
		policyEntry("z", cond("Accepted", "True", "Accepted")),
	}
	got := status.PolicyAncestors(live, entries, ours, t1)
	if len(got) != 16 {
		t.Fatalf("%d ancestors, want 16 (the CRDs' limit)", len(got))
	}
	if names := ancestorNames(got[14:]); names != fmt.Sprint([]string{ours + "/a", ours + "/z"}) {
		t.Errorf("ours %s: want z (held already) and then the first new one, a", names)
	}
	if full := status.PolicyAncestors(got, entries, ours, t1); ancestorNames(full[14:]) != ancestorNames(got[14:]) {
		t.Errorf("a full list changed its entries: %s", ancestorNames(full[14:]))
	}
}

func TestLoggerNamesPolicyAncestors(t *testing.T) {
	var buf bytes.Buffer
	fn := status.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e := policyEntry("gw", cond("Accepted", "False", "Conflicted"))
	fn(status.Change{Object: status.Object{Kind: "BackendTLSPolicy", Namespace: "default", Name: "p"}, Key: e.Key, Status: e.Status})
	if want := `ancestor.default/gw="Accepted=False(Conflicted)"`; !strings.Contains(buf.String(), want) {
		t.Errorf("log %q, want %s", buf.String(), want)
	}
}
