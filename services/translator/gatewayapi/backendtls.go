package gatewayapi

import (
	"cmp"
	"slices"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// policyState is what one translation found about one BackendTLSPolicy.
type policyState struct {
	policy *gatewayv1.BackendTLSPolicy
	// tls is how to reach the backends the policy applies to; with neither
	// CA certificates nor well-known CAs when the policy is not valid, so
	// that connections fail.
	tls *irv1.BackendTLS
	// invalid says why Accepted is False (besides a conflict).
	invalid *problem
	// unresolved says why ResolvedRefs is False.
	unresolved *problem
	// conflictedBy is the policy that takes precedence for one of the
	// targets; Accepted is then False with reason Conflicted.
	conflictedBy *gatewayv1.BackendTLSPolicy
}

// processBackendTLSPolicies applies BackendTLSPolicies to the backends the
// gateway's HTTPRoutes, GRPCRoutes and TLS-terminating TLSRoutes use, and
// records the status of every policy that targets one of them, with the
// gateway as its ancestor (a policy that names only ports the Service does
// not have is TargetNotFound). Policies of Services that no such route of
// the gateway uses get no status from it.
func processBackendTLSPolicies(t *translation) {
	if !t.hasPolicies {
		return // no backend has a policy, and no policy a status
	}
	states := map[types.NamespacedName]*policyState{}
	names := make([]string, 0, len(t.backends))
	for name := range t.backends {
		names = append(names, name)
	}
	slices.Sort(names)
	var services []types.NamespacedName // in the order of their first backend
	seen := map[types.NamespacedName]bool{}
	for _, name := range names {
		b := t.backends[name]
		l4 := b.Protocol == irv1.BackendProtocol_BACKEND_PROTOCOL_TCP || b.Protocol == irv1.BackendProtocol_BACKEND_PROTOCOL_UDP
		if l4 && !strings.HasSuffix(b.Name, terminatedTLS.suffix) {
			continue // TCP, UDP and TLS passthrough backends get the bytes as they come
		}
		if st := t.policyFor(b, states); st != nil {
			// Route units own their backends: the gateway's is a copy.
			b = proto.CloneOf(b)
			b.Tls = st.tls
			t.backends[name] = b
		}
		if svc := (types.NamespacedName{Namespace: b.Namespace, Name: b.Service}); !seen[svc] {
			seen[svc] = true
			services = append(services, svc)
		}
	}
	t.targetsNotFound(services, states)
	keys := make([]types.NamespacedName, 0, len(states))
	for nn := range states {
		keys = append(keys, nn)
	}
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, nn := range keys {
		t.routeStatuses = append(t.routeStatuses, t.policyStatus(states[nn]))
	}
}

// policyFor returns the policy that applies to backend b, evaluating (and
// recording in states) every policy that targets it. A policy whose target
// names b's Service port by sectionName takes precedence over one for the
// whole Service; among policies for the same target and section the oldest
// wins, then the first by namespace and name, and the others are
// Conflicted.
func (t *translation) policyFor(b *irv1.Backend, states map[types.NamespacedName]*policyState) *policyState {
	svc := types.NamespacedName{Namespace: b.Namespace, Name: b.Service}
	policies := t.idx.BackendTLSPoliciesFor(svc)
	if len(policies) == 0 {
		return nil
	}
	portName := servicePortName(t.idx.Service(svc), b.Port)
	var section, whole []*gatewayv1.BackendTLSPolicy
	for _, p := range policies {
		for _, ref := range p.Spec.TargetRefs {
			switch {
			case ref.Group != "" || ref.Kind != resources.KindService || string(ref.Name) != svc.Name:
			case ref.SectionName == nil || *ref.SectionName == "":
				whole = append(whole, p)
			case string(*ref.SectionName) == portName:
				section = append(section, p)
			}
		}
	}
	group := section
	if len(group) == 0 {
		group = whole
	}
	if len(group) == 0 {
		return nil
	}
	slices.SortFunc(group, func(a, b *gatewayv1.BackendTLSPolicy) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for i, p := range group {
		st := t.policyState(p, states)
		if i > 0 && st.conflictedBy == nil && p != group[0] {
			st.conflictedBy = group[0]
		}
	}
	return states[types.NamespacedName{Namespace: group[0].Namespace, Name: group[0].Name}]
}

// servicePortName returns the name of the TCP port of svc numbered port.
func servicePortName(svc *corev1.Service, port uint32) string {
	if svc == nil {
		return ""
	}
	for _, p := range svc.Spec.Ports {
		if uint32(p.Port) == port && cmp.Or(p.Protocol, corev1.ProtocolTCP) == corev1.ProtocolTCP {
			return p.Name
		}
	}
	return ""
}

// policyState returns the evaluation of p, computing it once.
func (t *translation) policyState(p *gatewayv1.BackendTLSPolicy, states map[types.NamespacedName]*policyState) *policyState {
	nn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	if st := states[nn]; st != nil {
		return st
	}
	st := t.evaluatePolicy(p)
	states[nn] = st
	return st
}

// policyStatus returns the status of a policy with the gateway as its
// ancestor (in parents).
func (t *translation) policyStatus(st *policyState) *busv1.Status {
	p := st.policy
	var cs conditions
	switch {
	case st.conflictedBy != nil:
		cs.set(string(gatewayv1.PolicyConditionAccepted), false, string(gatewayv1.PolicyReasonConflicted),
			"BackendTLSPolicy "+st.conflictedBy.Namespace+"/"+st.conflictedBy.Name+" targets the same Service and section and takes precedence")
	case st.invalid != nil:
		cs.set(string(gatewayv1.PolicyConditionAccepted), false, st.invalid.reason, st.invalid.message)
	default:
		cs.set(string(gatewayv1.PolicyConditionAccepted), true, string(gatewayv1.PolicyReasonAccepted), "Policy is accepted")
	}
	if st.unresolved != nil {
		cs.set(string(gatewayv1.BackendTLSPolicyConditionResolvedRefs), false, st.unresolved.reason, st.unresolved.message)
	} else {
		cs.set(string(gatewayv1.BackendTLSPolicyConditionResolvedRefs), true, string(gatewayv1.BackendTLSPolicyReasonResolvedRefs), "All references are resolved")
	}
	return &busv1.Status{
		Object:             objectRef(gatewayv1.GroupName, resources.KindBackendTLSPolicy, p.Namespace, p.Name),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: p.Generation,
		Parents: []*busv1.RouteParentStatus{{
			ParentRef: &busv1.ParentRef{Group: gatewayv1.GroupName, Kind: resources.KindGateway,
				Namespace: t.name.Namespace, Name: t.name.Name},
			ControllerName: t.controller,
			Conditions:     cs.stamp(p.Generation),
		}},
	}
}
