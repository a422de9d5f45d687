package gatewayapi

import (
	"fmt"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// protocols are the listener protocols gatewire serves, with the route kinds
// each admits by default.
var protocols = map[gatewayv1.ProtocolType]struct {
	ir    irv1.Protocol
	kinds []gatewayv1.Kind
}{
	gatewayv1.HTTPProtocolType: {irv1.Protocol_PROTOCOL_HTTP, []gatewayv1.Kind{"HTTPRoute"}},
}

// listener is one Gateway listener and what the translation found about it.
type listener struct {
	spec     *gatewayv1.Listener
	hostname string // "" when the listener names none
	kinds    []*busv1.RouteGroupKind
	admits   func(namespace string) bool

	notAccepted *problem // why Accepted is False
	unresolved  *problem // why ResolvedRefs is False
	conflict    *problem // why Conflicted is True

	// attached counts the routes attached to the listener.
	attached int32
}

// ready reports whether routes may attach to the listener.
func (l *listener) ready() bool { return l.notAccepted == nil && l.conflict == nil }

// processListeners validates the Gateway's listeners and opens an IR
// Listener for every port that has a ready one.
func processListeners(t *translation) {
	for i := range t.gateway.Spec.Listeners {
		t.listeners = append(t.listeners, t.newListener(&t.gateway.Spec.Listeners[i]))
	}
	markConflicts(t.listeners)
	for _, l := range t.listeners {
		if l.ready() {
			t.openPort(l)
		}
	}
}

func (t *translation) newListener(spec *gatewayv1.Listener) *listener {
	l := &listener{spec: spec, admits: func(string) bool { return false }}
	if spec.Hostname != nil {
		l.hostname = string(*spec.Hostname)
	}
	proto, ok := protocols[spec.Protocol]
	if !ok {
		l.notAccepted = &problem{string(gatewayv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("protocol %q is not supported", spec.Protocol)}
		return l
	}
	l.kinds, l.unresolved = routeKinds(spec.AllowedRoutes, proto.kinds)
	admits, p := t.admission(spec.AllowedRoutes)
	if p != nil {
		l.notAccepted = p
		return l
	}
	l.admits = admits
	return l
}

// routeKinds returns the route kinds a listener supports: those of its
// protocol, narrowed to allowedRoutes.kinds when set.
func routeKinds(allowed *gatewayv1.AllowedRoutes, supported []gatewayv1.Kind) ([]*busv1.RouteGroupKind, *problem) {
	if allowed == nil || len(allowed.Kinds) == 0 {
		out := make([]*busv1.RouteGroupKind, 0, len(supported))
		for _, k := range supported {
			out = append(out, &busv1.RouteGroupKind{Group: gatewayv1.GroupName, Kind: string(k)})
		}
		return out, nil
	}
	var out []*busv1.RouteGroupKind
	var invalid []string
	for _, k := range allowed.Kinds {
		group := gatewayv1.GroupName
		if k.Group != nil {
			group = string(*k.Group)
		}
		if group == gatewayv1.GroupName && contains(supported, k.Kind) {
			out = append(out, &busv1.RouteGroupKind{Group: group, Kind: string(k.Kind)})
		} else {
			invalid = append(invalid, strings.TrimPrefix(group+"/"+string(k.Kind), "/"))
		}
	}
	if len(invalid) > 0 {
		return out, &problem{string(gatewayv1.ListenerReasonInvalidRouteKinds),
			fmt.Sprintf("route kinds %s are not supported on this listener", strings.Join(invalid, ", "))}
	}
	return out, nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// admission returns which namespaces a listener admits routes from.
func (t *translation) admission(allowed *gatewayv1.AllowedRoutes) (func(string) bool, *problem) {
	from := gatewayv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if allowed != nil && allowed.Namespaces != nil {
		if allowed.Namespaces.From != nil {
			from = *allowed.Namespaces.From
		}
		selector = allowed.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromSame:
		own := t.name.Namespace
		return func(ns string) bool { return ns == own }, nil
	case gatewayv1.NamespacesFromAll:
		return func(string) bool { return true }, nil
	case gatewayv1.NamespacesFromSelector:
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if selector == nil || err != nil {
			return nil, &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
				fmt.Sprintf("allowedRoutes.namespaces.selector is not a valid label selector: %v", err)}
		}
		return func(ns string) bool { return sel.Matches(t.namespaceLabels(ns)) }, nil
	}
	return nil, &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
		fmt.Sprintf("allowedRoutes.namespaces.from %q is not supported", from)}
}

// namespaceLabels returns the labels of namespace ns. A namespace the index
// does not hold still has the name label Kubernetes gives every namespace.
func (t *translation) namespaceLabels(ns string) labels.Set {
	if n := t.idx.Namespace(ns); n != nil {
		return n.Labels
	}
	return labels.Set{"kubernetes.io/metadata.name": ns}
}

// markConflicts flags listeners that cannot share their port: incompatible
// protocols conflict, and so do listeners of one protocol with one hostname.
func markConflicts(ls []*listener) {
	byPort := map[gatewayv1.PortNumber][]*listener{}
	for _, l := range ls {
		byPort[l.spec.Port] = append(byPort[l.spec.Port], l)
	}
	for portNumber, group := range byPort {
		if conflictingProtocols(group) {
			for _, l := range group {
				l.conflict = &problem{string(gatewayv1.ListenerReasonProtocolConflict),
					fmt.Sprintf("listeners on port %d have incompatible protocols", portNumber)}
			}
			continue
		}
		hosts := map[string][]*listener{}
		for _, l := range group {
			hosts[l.hostname] = append(hosts[l.hostname], l)
		}
		for host, same := range hosts {
			if len(same) < 2 {
				continue
			}
			for _, l := range same {
				l.conflict = &problem{string(gatewayv1.ListenerReasonHostnameConflict),
					fmt.Sprintf("listeners on port %d share hostname %q", portNumber, orAny(host))}
			}
		}
	}
}

func conflictingProtocols(group []*listener) bool {
	for _, l := range group[1:] {
		if !compatibleProtocols(group[0].spec.Protocol, l.spec.Protocol) {
			return true
		}
	}
	return false
}

// compatibleProtocols reports whether listeners of protocols a and b may
// share a port.
func compatibleProtocols(a, b gatewayv1.ProtocolType) bool {
	tls := func(p gatewayv1.ProtocolType) bool {
		return p == gatewayv1.HTTPSProtocolType || p == gatewayv1.TLSProtocolType
	}
	return a == b || (tls(a) && tls(b))
}

// openPort records l on the IR listener of its port, opening it if needed.
func (t *translation) openPort(l *listener) {
	n := uint32(l.spec.Port)
	p := t.ports[n]
	if p == nil {
		proto := protocols[l.spec.Protocol]
		p = &port{
			ir: &irv1.Listener{
				Name:     fmt.Sprintf("%s-%d", strings.ToLower(string(l.spec.Protocol)), n),
				Port:     n,
				Protocol: proto.ir,
			},
			routes: map[*listener]map[string][]entry{},
		}
		t.ports[n] = p
	}
	p.ir.GatewayListeners = append(p.ir.GatewayListeners, string(l.spec.Name))
	p.listeners = append(p.listeners, l)
}

func orAny(host string) string {
	if host == "" {
		return "*"
	}
	return host
}
