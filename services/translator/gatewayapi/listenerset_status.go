package gatewayapi

import (
	"fmt"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// processListenerSetStatus records the status of every ListenerSet whose
// parentRef names the gateway, once routes have attached:
//
//   - Accepted False with NotAllowed or ParentNotAccepted when its
//     listeners were not merged, and no listener statuses;
//   - else Accepted True when at least one of its listeners is programmed,
//     Accepted False with ListenersNotValid when none is;
//   - Programmed follows Accepted (reason Programmed when True);
//   - each listener's status is a Gateway listener's, except that a
//     conflicted listener's Accepted and Programmed carry the conflict's
//     reason.
func processListenerSetStatus(t *translation) {
	for _, s := range t.listenerSets {
		t.routeStatuses = append(t.routeStatuses, t.listenerSetStatus(s))
	}
}

// accepted reports whether the ListenerSet attaches to the gateway: it is
// allowed and one of its listeners is programmed.
func (s *listenerSet) accepted() bool {
	return s.notAccepted == nil && s.valid() != nil
}

// valid returns the names of the listeners that are programmed.
func (s *listenerSet) valid() []string {
	var out []string
	for _, l := range s.listeners {
		if l.programmed() {
			out = append(out, string(l.spec.Name))
		}
	}
	return out
}

func (t *translation) listenerSetStatus(s *listenerSet) *busv1.Status {
	gen := s.obj.Generation
	st := &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindListenerSet, s.obj.Namespace, s.obj.Name),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: gen,
		Conditions:         s.conditions().stamp(gen),
	}
	for _, l := range s.listeners {
		cs := l.conditions()
		if l.notAccepted == nil && l.conflict != nil {
			cs.set(string(gatewayv1.ListenerEntryConditionAccepted), false, l.conflict.reason, l.conflict.message)
			cs.set(string(gatewayv1.ListenerEntryConditionProgrammed), false, l.conflict.reason, l.conflict.message)
		}
		st.Listeners = append(st.Listeners, &busv1.ListenerStatus{
			Name:           string(l.spec.Name),
			SupportedKinds: l.kinds,
			AttachedRoutes: t.attached[l],
			Conditions:     cs.stamp(gen),
		})
	}
	return st
}

// conditions returns the ListenerSet's own Accepted and Programmed.
func (s *listenerSet) conditions() conditions {
	var cs conditions
	accepted, programmed := string(gatewayv1.ListenerSetConditionAccepted), string(gatewayv1.ListenerSetConditionProgrammed)
	p := s.notAccepted
	valid := s.valid()
	if p == nil && len(valid) == 0 {
		p = &problem{string(gatewayv1.ListenerSetReasonListenersNotValid), "no listener is valid"}
	}
	if p != nil {
		cs.set(accepted, false, p.reason, p.message)
		cs.set(programmed, false, p.reason, p.message)
		return cs
	}
	message := "ListenerSet is accepted"
	if len(valid) < len(s.listeners) {
		var invalid []string
		for _, l := range s.listeners {
			if !l.programmed() {
				invalid = append(invalid, string(l.spec.Name))
			}
		}
		message = fmt.Sprintf("listeners %s are not valid; listeners %s are accepted", quoteJoin(invalid), quoteJoin(valid))
	}
	cs.set(accepted, true, string(gatewayv1.ListenerSetReasonAccepted), message)
	cs.set(programmed, true, string(gatewayv1.ListenerSetReasonProgrammed), "ListenerSet is programmed")
	return cs
}

// attachedListenerSets returns the number of accepted ListenerSets of the
// Gateway, for its status; nil when the Gateway allows no ListenerSet and
// none names it, which leaves the field out.
func (t *translation) attachedListenerSets() *int32 {
	al := t.gateway.Spec.AllowedListeners
	allows := al != nil && al.Namespaces != nil && al.Namespaces.From != nil && *al.Namespaces.From != gatewayv1.NamespacesFromNone
	if !allows && len(t.listenerSets) == 0 {
		return nil
	}
	var n int32
	for _, s := range t.listenerSets {
		if s.accepted() {
			n++
		}
	}
	return &n
}

// listenerSetsNotProgrammed marks the programmed ListenerSets among
// statuses, and their programmed listeners, as not Programmed (reason
// Invalid) with message: their gateway's configuration was not pushed.
func listenerSetsNotProgrammed(statuses []*busv1.Status, message string) {
	notProgrammed := func(cs []*busv1.Condition) {
		for _, c := range cs {
			if c.Type == string(gatewayv1.ListenerSetConditionProgrammed) && c.Status == conditionStatus(true) {
				c.Status, c.Reason, c.Message = conditionStatus(false), string(gatewayv1.ListenerSetReasonInvalid), message
			}
		}
	}
	for _, st := range statuses {
		if st.GetObject().GetKind() != resources.KindListenerSet {
			continue
		}
		notProgrammed(st.Conditions)
		for _, l := range st.Listeners {
			notProgrammed(l.Conditions)
		}
	}
}
