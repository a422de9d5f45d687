package kube_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// policyEntry is what the translator writes for BackendTLSPolicy ns/name
// and its ancestor gw, at generation.
func policyEntry(ns, name, gw string, generation int64, accepted string) *busv1.Status {
	reason := "Accepted"
	if accepted != "True" {
		reason = "Conflicted"
	}
	cs := []*busv1.Condition{condition("Accepted", accepted, reason), condition("ResolvedRefs", "True", "ResolvedRefs")}
	for _, c := range cs {
		c.ObservedGeneration = generation
	}
	return &busv1.Status{
		Object:             &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "BackendTLSPolicy", Namespace: ns, Name: name},
		Gateway:            &busv1.ObjectRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw},
		ObservedGeneration: generation,
		Parents: []*busv1.RouteParentStatus{{
			ParentRef:      &busv1.ParentRef{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: ns, Name: gw},
			ControllerName: controllerName,
			Conditions:     cs,
		}},
	}
}

// ancestors returns "<controller>/<gateway>" for each status.ancestors
// entry of p.
func ancestors(p *gatewayv1.BackendTLSPolicy) string {
	var out []string
	for _, a := range p.Status.Ancestors {
		out = append(out, fmt.Sprintf("%s/%s", a.ControllerName, a.AncestorRef.Name))
	}
	return fmt.Sprint(out)
}

// TestPolicyAncestorsAreWrittenAndMerged writes the entries of a
// BackendTLSPolicy for two Gateways: both become ancestors next to another
// controller's, the same entries again write nothing, a new generation is
// observed, and a deleted entry removes its ancestor only.
func TestPolicyAncestorsAreWrittenAndMerged(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw1", ours.Name), gateway(ns, "gw2", ours.Name), backendTLSPolicy(ns, "policy", "backend", "ca"))
	policy := h.get(ns, "policy", &gatewayv1.BackendTLSPolicy{}).(*gatewayv1.BackendTLSPolicy)
	theirs := liveParent("example.com/other", ns, "gw1")
	policy.Status.Ancestors = []gatewayv1.PolicyAncestorStatus{{
		AncestorRef: theirs.ParentRef, ControllerName: theirs.ControllerName, Conditions: theirs.Conditions}}
	if err := h.c.Status().Update(h.ctx, policy); err != nil {
		t.Fatal(err)
	}
	opts := h.options()
	opts.LeaderElection = false
	p := h.start(opts)
	get := func() *gatewayv1.BackendTLSPolicy {
		return h.get(ns, "policy", &gatewayv1.BackendTLSPolicy{}).(*gatewayv1.BackendTLSPolicy)
	}

	put := func(generation int64) {
		h.putStatus(bus.StatusKey("BackendTLSPolicy", ns, "policy", ns, "gw1"), policyEntry(ns, "policy", "gw1", generation, "True"))
		h.putStatus(bus.StatusKey("BackendTLSPolicy", ns, "policy", ns, "gw2"), policyEntry(ns, "policy", "gw2", generation, "False"))
	}
	put(1)
	want := fmt.Sprint([]string{"example.com/other/gw1", controllerName + "/gw1", controllerName + "/gw2"})
	h.eventually("the policy has both gateways as ancestors, and the other controller's entry", func() bool {
		return ancestors(get()) == want
	})
	written := get()
	if a := written.Status.Ancestors[0]; a.Conditions[0].Message != "theirs" {
		t.Errorf("the other controller's entry changed: %+v", a)
	}
	if c := conditionOf(written.Status.Ancestors[2].Conditions, "Accepted"); c.Status != "False" || c.Reason != "Conflicted" || c.ObservedGeneration != 1 {
		t.Errorf("gw2's Accepted is %+v, want False, Conflicted, generation 1", c)
	}
	h.checkNoPolicyRewrite(p.StatusWrites, put)

	// A new generation of the policy: its conditions observe it, and those
	// whose status holds keep their transition time.
	changed := get()
	changed.Spec.Validation.Hostname = "other.example.com"
	if err := h.c.Update(h.ctx, changed); err != nil {
		t.Fatal(err)
	}
	bumped := get().Generation
	put(bumped)
	h.eventually("the ancestors observe the new generation", func() bool {
		for _, a := range get().Status.Ancestors[1:] {
			if a.Conditions[0].ObservedGeneration != bumped {
				return false
			}
		}
		return true
	})
	now := get()
	if was, is := written.Status.Ancestors[1].Conditions[0].LastTransitionTime, now.Status.Ancestors[1].Conditions[0].LastTransitionTime; !is.Equal(&was) {
		t.Errorf("gw1's Accepted stayed True but its transition time moved from %v to %v", was, is)
	}

	// gw2 no longer uses the policy: its ancestor goes, the others stay.
	h.deleteStatus(bus.StatusKey("BackendTLSPolicy", ns, "policy", ns, "gw2"))
	want = fmt.Sprint([]string{"example.com/other/gw1", controllerName + "/gw1"})
	h.eventually("the policy has lost the ancestor gw2 only", func() bool { return ancestors(get()) == want })
}

// checkNoPolicyRewrite puts the same entries again and touches the policy
// (so that it is reconciled against its live object): nothing is written.
func (h *harness) checkNoPolicyRewrite(writes func() uint64, put func(generation int64)) {
	h.t.Helper()
	time.Sleep(quiet) // let the first round's writes land
	before := writes()
	put(1)
	p := h.get(h.ns, "policy", &gatewayv1.BackendTLSPolicy{})
	p.SetLabels(map[string]string{"touched": "yes"})
	if err := h.c.Update(h.ctx, p); err != nil {
		h.t.Fatal(err)
	}
	time.Sleep(quiet)
	if got := writes() - before; got != 0 {
		h.t.Errorf("the same entries again: %d status writes, want 0", got)
	}
}

// TestPolicyWithoutOurAncestorsIsLeftAlone checks that a policy no entry
// names, with only another controller's ancestors, is never written.
func TestPolicyWithoutOurAncestorsIsLeftAlone(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	h.create(backendTLSPolicy(ns, "policy", "backend", "ca"))
	policy := h.get(ns, "policy", &gatewayv1.BackendTLSPolicy{}).(*gatewayv1.BackendTLSPolicy)
	theirs := liveParent("example.com/other", ns, "gw")
	policy.Status.Ancestors = []gatewayv1.PolicyAncestorStatus{{
		AncestorRef: theirs.ParentRef, ControllerName: theirs.ControllerName, Conditions: []metav1.Condition{theirs.Conditions[0]}}}
	if err := h.c.Status().Update(h.ctx, policy); err != nil {
		t.Fatal(err)
	}
	opts := h.options()
	opts.LeaderElection = false
	p := h.start(opts)
	time.Sleep(quiet)
	if n := p.StatusWrites(); n != 0 {
		t.Errorf("%d status writes, want 0", n)
	}
	if got := ancestors(h.get(ns, "policy", &gatewayv1.BackendTLSPolicy{}).(*gatewayv1.BackendTLSPolicy)); got != fmt.Sprint([]string{"example.com/other/gw"}) {
		t.Errorf("ancestors %s, want the other controller's only", got)
	}
}

// TestPolicyLastAncestorIsRemoved deletes the only entry of a policy that
// has no other controller's ancestor: status.ancestors, a required field,
// is written empty.
func TestPolicyLastAncestorIsRemoved(t *testing.T) {
	h := newHarness(t)
	ns := h.ns
	ours := h.class(controllerName)
	h.create(ours, gateway(ns, "gw", ours.Name), backendTLSPolicy(ns, "policy", "backend", "ca"))
	opts := h.options()
	opts.LeaderElection = false
	h.start(opts)
	get := func() *gatewayv1.BackendTLSPolicy {
		return h.get(ns, "policy", &gatewayv1.BackendTLSPolicy{}).(*gatewayv1.BackendTLSPolicy)
	}
	key := bus.StatusKey("BackendTLSPolicy", ns, "policy", ns, "gw")
	h.putStatus(key, policyEntry(ns, "policy", "gw", 1, "True"))
	h.eventually("the policy has its ancestor", func() bool { return ancestors(get()) == fmt.Sprint([]string{controllerName + "/gw"}) })
	h.deleteStatus(key)
	h.eventually("the policy has no ancestor", func() bool { return len(get().Status.Ancestors) == 0 })
}
