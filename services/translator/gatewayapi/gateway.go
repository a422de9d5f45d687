package gatewayapi

import (
	"fmt"
	"strconv"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// processGateway sets the Gateway's own conditions from its listeners.
func processGateway(t *translation) {
	var invalid, valid, unresolved []string
	for _, l := range t.listeners {
		if l.ready() {
			valid = append(valid, string(l.spec.Name))
		} else {
			invalid = append(invalid, string(l.spec.Name))
		}
		if l.unresolved != nil {
			unresolved = append(unresolved, string(l.spec.Name))
		}
	}
	cs := &t.gatewayConditions
	switch {
	case len(invalid) == 0:
		cs.set(string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "Gateway is accepted")
	case len(valid) > 0:
		cs.set(string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonListenersNotValid),
			fmt.Sprintf("listeners %s are not valid; listeners %s are accepted", quoteJoin(invalid), quoteJoin(valid)))
	default:
		cs.set(string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonListenersNotValid),
			"no listener is valid")
	}
	unsupported, unusable := addressProblems(t.gateway.Spec.Addresses)
	if unsupported != nil {
		cs.set(string(gatewayv1.GatewayConditionAccepted), false, unsupported.reason, unsupported.message)
	}
	if p := parametersProblem(t.gateway.Spec.Infrastructure); p != nil {
		cs.set(string(gatewayv1.GatewayConditionAccepted), false, p.reason, p.message)
	}
	switch {
	case len(t.servedPorts()) == 0:
		cs.set(string(gatewayv1.GatewayConditionProgrammed), false, string(gatewayv1.GatewayReasonInvalid), "no listener is programmed")
	case unusable != nil:
		cs.set(string(gatewayv1.GatewayConditionProgrammed), false, unusable.reason, unusable.message)
	default:
		cs.set(string(gatewayv1.GatewayConditionProgrammed), true, string(gatewayv1.GatewayReasonProgrammed), "Gateway is programmed")
	}
	switch {
	case t.gatewayUnresolved != nil:
		cs.set(string(gatewayv1.GatewayConditionResolvedRefs), false, t.gatewayUnresolved.reason, t.gatewayUnresolved.message)
	case len(unresolved) == 0:
		cs.set(string(gatewayv1.GatewayConditionResolvedRefs), true, string(gatewayv1.GatewayReasonResolvedRefs), "All references are resolved")
	default:
		cs.set(string(gatewayv1.GatewayConditionResolvedRefs), false, string(gatewayv1.GatewayReasonListenersNotResolved),
			fmt.Sprintf("listeners %s have unresolved references", quoteJoin(unresolved)))
	}
	if insecureFrontend(t.gateway) {
		cs.set(string(gatewayv1.GatewayConditionInsecureFrontendValidationMode), true, string(gatewayv1.GatewayReasonConfigurationChanged),
			"spec.tls.frontend lets clients without a valid certificate connect (AllowInsecureFallback)")
	}
}

// addressProblems checks spec.addresses. A Gateway gets the addresses of
// the Service the infra service makes for it (its load balancer's IPs and
// host names, else its cluster IPs), so an entry may ask for an IPAddress
// or a Hostname and leave the value for gatewire to fill; gatewire binds no
// address of the user's choosing. Another type is unsupported (the Gateway
// is not Accepted: UnsupportedAddress); a value is not used (the Gateway is
// not Programmed: AddressNotUsable). Its listeners are served all the same,
// on the Service's addresses.
func addressProblems(addrs []gatewayv1.GatewaySpecAddress) (unsupported, unusable *problem) {
	var types, values []string
	for _, a := range addrs {
		typ := gatewayv1.IPAddressType // the CRD's default
		if a.Type != nil {
			typ = *a.Type
		}
		switch {
		case typ != gatewayv1.IPAddressType && typ != gatewayv1.HostnameAddressType:
			types = append(types, string(typ))
		case a.Value != "":
			values = append(values, a.Value)
		}
	}
	if len(types) > 0 {
		unsupported = &problem{string(gatewayv1.GatewayReasonUnsupportedAddress),
			fmt.Sprintf("spec.addresses: types %s are not supported; use IPAddress or Hostname", quoteJoin(types))}
	}
	if len(values) > 0 {
		unusable = &problem{string(gatewayv1.GatewayReasonAddressNotUsable),
			fmt.Sprintf("spec.addresses: %s cannot be used: gatewire gives a Gateway the addresses of its Service; leave value empty to get them", quoteJoin(values))}
	}
	return unsupported, unusable
}

// parametersProblem reports spec.infrastructure.parametersRef: gatewire has
// no Gateway parameters, so any reference is to a kind it does not support
// and the Gateway is not Accepted (InvalidParameters), as a GatewayClass
// with parameters is not (see TranslateClass). Its listeners are served all
// the same: the parameters would change nothing.
func parametersProblem(infra *gatewayv1.GatewayInfrastructure) *problem {
	if infra == nil || infra.ParametersRef == nil {
		return nil
	}
	ref := infra.ParametersRef
	return &problem{string(gatewayv1.GatewayReasonInvalidParameters),
		fmt.Sprintf("spec.infrastructure.parametersRef to %s %q: gatewire has no Gateway parameters", ref.Kind, ref.Name)}
}

// quoteJoin lists names, quoted, separated by commas.
func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// gatewayStatus returns the status of the Gateway with its listeners.
func (t *translation) gatewayStatus() *busv1.Status {
	gen := t.gateway.Generation
	st := &busv1.Status{
		Object:             t.gatewayRef(),
		Gateway:            t.gatewayRef(),
		ObservedGeneration: gen,
		Conditions:         t.gatewayConditions.stamp(gen),
	}
	st.AttachedListenerSets = t.attachedListenerSets()
	for _, l := range t.listeners {
		st.Listeners = append(st.Listeners, &busv1.ListenerStatus{
			Name:           string(l.spec.Name),
			SupportedKinds: l.kinds,
			AttachedRoutes: t.attached[l],
			Conditions:     l.conditions().stamp(gen),
		})
	}
	return st
}

// conditions returns the listener's conditions: Accepted, Programmed,
// ResolvedRefs and Conflicted. A conflicted listener is not accepted either
// (reason Invalid): the spec wants every indistinct listener left out.
func (l *listener) conditions() conditions {
	var cs conditions
	switch {
	case l.notAccepted != nil:
		cs.set(string(gatewayv1.ListenerConditionAccepted), false, l.notAccepted.reason, l.notAccepted.message)
	case l.conflict != nil:
		cs.set(string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonInvalid), l.conflict.message)
	default:
		cs.set(string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "Listener is accepted")
	}
	switch {
	case l.programmed():
		cs.set(string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), "Listener is programmed")
	case l.ready():
		cs.set(string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), "Listener has no valid certificate")
	default:
		cs.set(string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), "Listener is not valid")
	}
	if l.unresolved != nil {
		cs.set(string(gatewayv1.ListenerConditionResolvedRefs), false, l.unresolved.reason, l.unresolved.message)
	} else {
		cs.set(string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "All references are resolved")
	}
	if l.conflict != nil {
		cs.set(string(gatewayv1.ListenerConditionConflicted), true, l.conflict.reason, l.conflict.message)
	} else {
		cs.set(string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "No conflicts")
	}
	return cs
}

// NotProgrammed marks the gateway, its ListenerSets and their programmed
// listeners as not Programmed (reason Invalid) with message: what the
// translator could not turn into valid proxy configuration. Its previous
// configuration stays in place.
func (r *Result) NotProgrammed(message string) {
	if len(r.Statuses) == 0 {
		return
	}
	gw := r.Statuses[0]
	for _, c := range gw.Conditions {
		if c.Type == string(gatewayv1.GatewayConditionProgrammed) {
			c.Status, c.Reason, c.Message = conditionStatus(false), string(gatewayv1.GatewayReasonInvalid), message
		}
	}
	for _, l := range gw.Listeners {
		for _, c := range l.Conditions {
			if c.Type == string(gatewayv1.ListenerConditionProgrammed) && c.Status == conditionStatus(true) {
				c.Status, c.Reason, c.Message = conditionStatus(false), string(gatewayv1.ListenerReasonInvalid), message
			}
		}
	}
	listenerSetsNotProgrammed(r.Statuses[1:], message)
}
