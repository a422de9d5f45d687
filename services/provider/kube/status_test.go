package kube_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/testkit"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/provider/kube"
)

func liveParent(controller, ns, gw string) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{
		ParentRef:      parentRefs(ns, gw)[0],
		ControllerName: gatewayv1.GatewayController(controller),
		Conditions: []metav1.Condition{{
			Type: "Accepted", Status: "True", Reason: "Accepted", Message: "theirs",
			LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		}},
	}
}

func condition(typ, status, reason string) *busv1.Condition {
	return &busv1.Condition{Type: typ, Status: status, Reason: reason, Message: typ + " is " + status}
}

// gatewayEntry is what the translator writes for Gateway ns/gw.
func gatewayEntry(ns, gw string, programmed string) *busv1.Status {
	ref := &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw}
	reason := "Programmed"
	if programmed != "True" {
		reason = "Invalid"
	}
	return &busv1.Status{
		Object: ref, Gateway: ref, ObservedGeneration: 1,
		Conditions: []*busv1.Condition{condition("Accepted", "True", "Accepted"), condition("Programmed", programmed, reason)},
		Listeners: []*busv1.ListenerStatus{{
			Name: "http", AttachedRoutes: 1,
			SupportedKinds: []*busv1.RouteGroupKind{{Group: gatewayv1.GroupName, Kind: "HTTPRoute"}},
			Conditions:     []*busv1.Condition{condition("Accepted", "True", "Accepted"), condition("Programmed", programmed, reason)},
		}},
		Addresses: []string{"192.0.2.10"},
	}
}

// routeEntry is what the translator writes for HTTPRoute ns/name and its
// parent gw.
func routeEntry(ns, name, gw string) *busv1.Status {
	return &busv1.Status{
		Object:             &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: ns, Name: name},
		Gateway:            &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw},
		ObservedGeneration: 1,
		Parents: []*busv1.RouteParentStatus{{
			ParentRef:      &busv1.ParentRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw},
			ControllerName: controllerName,
			Conditions:     []*busv1.Condition{condition("Accepted", "True", "Accepted"), condition("ResolvedRefs", "True", "ResolvedRefs")},
		}},
	}
}

func (h *harness) putStatus(key string, st *busv1.Status) {
	h.t.Helper()
	if _, err := h.bus.Put(h.ctx, bus.Status, key, st); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deleteStatus(key string) {
	h.t.Helper()
	if err := h.bus.Delete(h.ctx, bus.Status, key); err != nil {
		h.t.Fatal(err)
	}
}

// get reads ns/name into obj.
func (h *harness) get(ns, name string, obj client.Object) client.Object {
	h.t.Helper()
	if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		h.t.Fatal(err)
	}
	return obj
}

// condition returns the condition typ of cs, or nil.
func conditionOf(cs []metav1.Condition, typ string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// parents returns "<controller>/<gateway>" for each status.parents entry.
func parents(r *gatewayv1.HTTPRoute) []string {
	var out []string
	for _, p := range r.Status.Parents {
		out = append(out, fmt.Sprintf("%s/%s", p.ControllerName, p.ParentRef.Name))
	}
	return out
}

func TestStatusIsWrittenToGatewaysAndRoutes(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw1", ours.Name), gateway(ns, "gw2", ours.Name), httpRoute(ns, "web", "gw1", "gw2"))
	route := h.get(ns, "web", &gatewayv1.HTTPRoute{}).(*gatewayv1.HTTPRoute)
	route.Status.Parents = []gatewayv1.RouteParentStatus{liveParent("example.com/other", ns, "gw1")}
	if err := h.c.Status().Update(h.ctx, route); err != nil {
		t.Fatal(err)
	}
	opts := h.options()
	opts.LeaderElection = false
	h.start(opts)

	h.putStatus(bus.StatusKey("GatewayClass", "", ours.Name, "-", "-"), &busv1.Status{
		ObservedGeneration: 1, Conditions: []*busv1.Condition{condition("Accepted", "True", "Accepted")}})
	for _, gw := range []string{"gw1", "gw2"} {
		h.putStatus(bus.StatusKey("Gateway", ns, gw, ns, gw), gatewayEntry(ns, gw, "True"))
		h.putStatus(bus.StatusKey("HTTPRoute", ns, "web", ns, gw), routeEntry(ns, "web", gw))
	}
	h.eventually("the GatewayClass is Accepted", func() bool {
		c := conditionOf(h.get("", ours.Name, &gatewayv1.GatewayClass{}).(*gatewayv1.GatewayClass).Status.Conditions, "Accepted")
		return c != nil && c.Status == "True"
	})
	h.eventually("gw1 is Programmed, with its listener and address", func() bool {
		gw := h.get(ns, "gw1", &gatewayv1.Gateway{}).(*gatewayv1.Gateway)
		c := conditionOf(gw.Status.Conditions, "Programmed")
		return c != nil && c.Status == "True" && len(gw.Status.Listeners) == 1 && gw.Status.Listeners[0].AttachedRoutes == 1 &&
			len(gw.Status.Addresses) == 1 && gw.Status.Addresses[0].Value == "192.0.2.10"
	})
	want := fmt.Sprint([]string{"example.com/other/gw1", controllerName + "/gw1", controllerName + "/gw2"})
	h.eventually("the route has both parents, and the other controller's entry", func() bool {
		return fmt.Sprint(parents(h.get(ns, "web", &gatewayv1.HTTPRoute{}).(*gatewayv1.HTTPRoute))) == want
	})

	// The entry of gw2 is deleted: its parent goes, the others stay.
	h.deleteStatus(bus.StatusKey("HTTPRoute", ns, "web", ns, "gw2"))
	want = fmt.Sprint([]string{"example.com/other/gw1", controllerName + "/gw1"})
	h.eventually("the route has lost the parent gw2 only", func() bool {
		return fmt.Sprint(parents(h.get(ns, "web", &gatewayv1.HTTPRoute{}).(*gatewayv1.HTTPRoute))) == want
	})
	if p := h.get(ns, "web", &gatewayv1.HTTPRoute{}).(*gatewayv1.HTTPRoute).Status.Parents[0]; p.Conditions[0].Message != "theirs" {
		t.Errorf("the other controller's entry changed: %+v", p)
	}
	h.checkDataPlaneOverride(ns, "gw1")
}

// checkDataPlaneOverride puts a data-plane entry with Programmed False for
// Gateway ns/gw, checks that it wins over the translator's, then deletes it.
func (h *harness) checkDataPlaneOverride(ns, gw string) {
	h.t.Helper()
	programmed := func() *metav1.Condition {
		return conditionOf(h.get(ns, gw, &gatewayv1.Gateway{}).(*gatewayv1.Gateway).Status.Conditions, "Programmed")
	}
	accepted := conditionOf(h.get(ns, gw, &gatewayv1.Gateway{}).(*gatewayv1.Gateway).Status.Conditions, "Accepted")
	key := bus.DataPlaneStatusKey(ns, gw, "xds-0")
	h.putStatus(key, &busv1.Status{Conditions: []*busv1.Condition{condition("Programmed", "False", "Invalid")}})
	h.eventually("the data plane's Programmed False wins", func() bool {
		c := programmed()
		return c.Status == "False" && c.Reason == "Invalid" && c.ObservedGeneration == 1
	})
	gwNow := h.get(ns, gw, &gatewayv1.Gateway{}).(*gatewayv1.Gateway)
	if a := conditionOf(gwNow.Status.Conditions, "Accepted"); !a.LastTransitionTime.Equal(&accepted.LastTransitionTime) {
		h.t.Errorf("Accepted did not change but its lastTransitionTime moved from %v to %v", accepted.LastTransitionTime, a.LastTransitionTime)
	}
	h.deleteStatus(key)
	h.eventually("the translator's Programmed is back", func() bool { return programmed().Status == "True" })
}

// TestStatusWritesOnlyWhatChanged counts the writes for N routes with one
// parent each: one per object, then none for the same status again.
func TestStatusWritesOnlyWhatChanged(t *testing.T) {
	const n = 20
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw", ours.Name))
	for i := range n {
		h.create(httpRoute(ns, fmt.Sprintf("r%02d", i), "gw"))
	}
	opts := h.options()
	opts.LeaderElection = false
	p := h.start(opts)
	round := func() {
		h.putStatus(bus.StatusKey("Gateway", ns, "gw", ns, "gw"), gatewayEntry(ns, "gw", "True"))
		for i := range n {
			name := fmt.Sprintf("r%02d", i)
			h.putStatus(bus.StatusKey("HTTPRoute", ns, name, ns, "gw"), routeEntry(ns, name, "gw"))
		}
	}
	before := p.StatusWrites()
	start := time.Now()
	round()
	h.eventually("every route has its parent", func() bool {
		var list gatewayv1.HTTPRouteList
		if err := h.c.List(h.ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		done := 0
		for i := range list.Items {
			if len(list.Items[i].Status.Parents) == 1 {
				done++
			}
		}
		return done == n && p.StatusWrites()-before >= n+1
	})
	elapsed := time.Since(start)
	time.Sleep(quiet) // let late reconciles show any extra write
	if got := p.StatusWrites() - before; got != n+1 {
		t.Errorf("first round: %d status writes, want %d (%d routes and the Gateway)", got, n+1, n)
	}
	t.Logf("first round: %d status writes for %d routes and 1 Gateway in %s", p.StatusWrites()-before, n, elapsed.Round(time.Millisecond))

	// The same status again, and every route touched (so that each is
	// reconciled against its live object): nothing to write.
	before = p.StatusWrites()
	round()
	for i := range n {
		r := h.get(ns, fmt.Sprintf("r%02d", i), &gatewayv1.HTTPRoute{})
		r.SetLabels(map[string]string{"touched": "yes"})
		if err := h.c.Update(h.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(quiet)
	if got := p.StatusWrites() - before; got != 0 {
		t.Errorf("second, identical round: %d status writes, want 0", got)
	}
	t.Logf("second, identical round: %d status writes", p.StatusWrites()-before)
}

// TestStatusConflictIsRetried changes the Gateway between the writer's read
// and its write: the write conflicts, is retried and succeeds.
func TestStatusConflictIsRetried(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw", ours.Name))
	opts := h.options()
	opts.LeaderElection = false
	logs := &testkit.LogBuffer{}
	p, err := kube.New(cluster.Config, h.bus, logs.JSONLogger(slog.LevelDebug), opts)
	if err != nil {
		t.Fatal(err)
	}
	var interfered atomic.Bool
	kube.SetBeforeStatusUpdate(p, func(ctx context.Context, obj client.Object) {
		if obj.GetName() != "gw" || interfered.Swap(true) {
			return
		}
		live := h.get(ns, "gw", &gatewayv1.Gateway{})
		live.SetLabels(map[string]string{"changed": "between-read-and-write"})
		if err := h.c.Update(ctx, live); err != nil {
			t.Error(err)
		}
	})
	h.run(p, logs)
	h.putStatus(bus.StatusKey("Gateway", ns, "gw", ns, "gw"), gatewayEntry(ns, "gw", "True"))
	h.eventually("the status is written despite the conflict", func() bool {
		c := conditionOf(h.get(ns, "gw", &gatewayv1.Gateway{}).(*gatewayv1.Gateway).Status.Conditions, "Programmed")
		return c != nil && c.Status == "True"
	})
	if p.StatusConflicts() == 0 || !interfered.Load() {
		t.Errorf("%d conflicts, want at least 1", p.StatusConflicts())
	}
	if l := h.get(ns, "gw", &gatewayv1.Gateway{}).GetLabels()["changed"]; l == "" {
		t.Error("the change made between read and write is lost")
	}
	t.Logf("%d conflict(s), %d write(s)", p.StatusConflicts(), p.StatusWrites())
}
