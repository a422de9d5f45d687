package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// protocol is what gatewire does with one listener protocol.
type protocol struct {
	ir irv1.Protocol
	// http is set when requests are routed by virtual host (HTTP, HTTPS).
	http bool
	// udp is set for UDP listeners; the others share TCP ports.
	udp bool
	// kinds are the route kinds the listener admits by default.
	kinds []gatewayv1.Kind
}

// protocols are the listener protocols gatewire serves.
var protocols = map[gatewayv1.ProtocolType]protocol{
	gatewayv1.HTTPProtocolType:  {ir: irv1.Protocol_PROTOCOL_HTTP, http: true, kinds: []gatewayv1.Kind{resources.KindHTTPRoute, resources.KindGRPCRoute}},
	gatewayv1.HTTPSProtocolType: {ir: irv1.Protocol_PROTOCOL_HTTPS, http: true, kinds: []gatewayv1.Kind{resources.KindHTTPRoute, resources.KindGRPCRoute}},
	gatewayv1.TLSProtocolType:   {ir: irv1.Protocol_PROTOCOL_TLS, kinds: []gatewayv1.Kind{resources.KindTLSRoute}},
	gatewayv1.TCPProtocolType:   {ir: irv1.Protocol_PROTOCOL_TCP, kinds: []gatewayv1.Kind{resources.KindTCPRoute}},
	gatewayv1.UDPProtocolType:   {ir: irv1.Protocol_PROTOCOL_UDP, udp: true, kinds: []gatewayv1.Kind{resources.KindUDPRoute}},
}

// listener is one Gateway listener and what the translation found about it.
type listener struct {
	spec     *gatewayv1.Listener
	set      *listenerSet // the ListenerSet that declares it; nil for the Gateway's own
	proto    protocol
	hostname string // "" when the listener names none (or its protocol has none)
	kinds    []*busv1.RouteGroupKind
	// admits reports whether the listener admits routes from a namespace,
	// whose labels it may read through r.
	admits func(r resources.Reader, namespace string) bool
	// terminates is set for listeners that terminate TLS: HTTPS, and TLS in
	// mode Terminate. certificates are the SDS names of their valid
	// certificates.
	terminates   bool
	certificates []string
	// frontend is how an HTTPS listener validates client certificates, or
	// nil.
	frontend *frontendValidation

	notAccepted *problem // why Accepted is False
	unresolved  *problem // why ResolvedRefs is False
	conflict    *problem // why Conflicted is True

}

// ready reports whether routes may attach to the listener: it is accepted
// and not conflicted.
func (l *listener) ready() bool { return l.notAccepted == nil && l.conflict == nil }

// programmed reports whether the listener gets proxy configuration: it is
// ready and, when it terminates TLS, has a valid certificate.
func (l *listener) programmed() bool {
	return l.ready() && (!l.terminates || len(l.certificates) > 0)
}

// openPorts opens the IR Listener of the port (and transport) of every
// ready listener of ls, and names every IR Listener again after it.
func (t *translation) openPorts(ls []*listener) {
	for _, l := range ls {
		if l.ready() {
			t.openPort(l)
		}
	}
	for _, p := range t.ports {
		t.nameListener(p, false)
	}
	for _, p := range t.udpPorts {
		t.nameListener(p, true)
	}
}

func (t *gatewayCtx) newListener(spec *gatewayv1.Listener, set *listenerSet) *listener {
	l := &listener{spec: spec, set: set, admits: func(resources.Reader, string) bool { return false }}
	proto, ok := protocols[spec.Protocol]
	if !ok {
		l.notAccepted = &problem{string(gatewayv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("protocol %q is not supported", spec.Protocol)}
		return l
	}
	l.proto = proto
	if spec.Hostname != nil && !proto.udp && spec.Protocol != gatewayv1.TCPProtocolType {
		l.hostname = string(*spec.Hostname)
	}
	l.kinds, l.unresolved = routeKinds(spec.AllowedRoutes, protocolKinds(spec, proto))
	if p := t.listenerTLS(l); p != nil {
		l.notAccepted = p
		return l
	}
	admits, p := t.admission(spec.AllowedRoutes, l.namespace(t.name.Namespace))
	if p != nil {
		l.notAccepted = p
		return l
	}
	l.admits = admits
	return l
}

// protocolKinds returns the route kinds a listener of its protocol
// supports: a TLS listener that terminates TLS (mode Terminate) also takes
// TCPRoutes, whose connections are proxied once TLS is terminated, as in
// Envoy Gateway.
func protocolKinds(spec *gatewayv1.Listener, proto protocol) []gatewayv1.Kind {
	if spec.Protocol != gatewayv1.TLSProtocolType || spec.TLS == nil ||
		spec.TLS.Mode != nil && *spec.TLS.Mode == gatewayv1.TLSModePassthrough {
		return proto.kinds
	}
	return append(slices.Clip(proto.kinds), resources.KindTCPRoute)
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

// admission returns which namespaces a listener declared in namespace own
// admits routes from.
func (t *gatewayCtx) admission(allowed *gatewayv1.AllowedRoutes, own string) (func(resources.Reader, string) bool, *problem) {
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
		return func(_ resources.Reader, ns string) bool { return ns == own }, nil
	case gatewayv1.NamespacesFromAll:
		return func(resources.Reader, string) bool { return true }, nil
	case gatewayv1.NamespacesFromSelector:
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if selector == nil || err != nil {
			return nil, &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
				fmt.Sprintf("allowedRoutes.namespaces.selector is not a valid label selector: %v", err)}
		}
		return func(r resources.Reader, ns string) bool { return sel.Matches(namespaceLabels(r, ns)) }, nil
	}
	return nil, &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
		fmt.Sprintf("allowedRoutes.namespaces.from %q is not supported", from)}
}

// namespaceLabels returns the labels of namespace ns. A namespace the index
// does not hold still has the name label Kubernetes gives every namespace.
func namespaceLabels(r resources.Reader, ns string) labels.Set {
	if n := r.Namespace(ns); n != nil {
		return n.Labels
	}
	return labels.Set{"kubernetes.io/metadata.name": ns}
}

// openPort records l on the IR listener of its port and transport, opening
// it if needed. Only programmed HTTP and HTTPS listeners take part in
// virtual host selection; an HTTPS listener adds a TLS termination for its
// hostname.
func (t *translation) openPort(l *listener) {
	n := uint32(l.spec.Port)
	ports := t.ports
	if l.proto.udp {
		ports = t.udpPorts
	}
	p := ports[n]
	if p == nil {
		p = &port{ir: &irv1.Listener{Port: n}, routes: map[*listener]map[string][]entry{}}
		ports[n] = p
	}
	p.ir.GatewayListeners = append(p.ir.GatewayListeners, l.qualifiedName())
	if !l.programmed() {
		return
	}
	if l.proto.http {
		p.listeners = append(p.listeners, l)
	}
	if l.spec.Protocol == gatewayv1.HTTPSProtocolType {
		term := &irv1.TLSTermination{Hostname: l.hostname, Secrets: l.certificates}
		if l.frontend != nil {
			term.ClientCaCertificates, term.ClientCertificateOptional = l.frontend.ca, l.frontend.optional
		}
		p.ir.Tls = append(p.ir.Tls, term)
	}
}

// nameListener sets the protocol and name of an IR listener from its
// programmed Gateway listeners: HTTPS when one of them is (HTTPS and TLS
// passthrough listeners may share a port), else the protocol of the first.
// A port with no programmed listener keeps no protocol: it is left out of
// the IR.
func (t *translation) nameListener(p *port, udp bool) {
	for _, l := range t.allListeners() {
		if !l.programmed() || uint32(l.spec.Port) != p.ir.Port || l.proto.udp != udp {
			continue
		}
		if p.ir.Protocol == irv1.Protocol_PROTOCOL_UNSPECIFIED || l.proto.ir == irv1.Protocol_PROTOCOL_HTTPS {
			p.ir.Protocol = l.proto.ir
		}
	}
	name := strings.TrimPrefix(strings.ToLower(p.ir.Protocol.String()), "protocol_")
	p.ir.Name = fmt.Sprintf("%s-%d", name, p.ir.Port)
}

// servedPorts returns the IR listeners that have a programmed listener.
func (t *translation) servedPorts() []*port {
	var out []*port
	for _, ports := range []map[uint32]*port{t.ports, t.udpPorts} {
		for _, p := range ports {
			if p.ir.Protocol != irv1.Protocol_PROTOCOL_UNSPECIFIED {
				out = append(out, p)
			}
		}
	}
	return out
}

// compareListeners orders IR listeners by port, then name.
func compareListeners(a, b *irv1.Listener) int {
	return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Name, b.Name))
}

func orAny(host string) string {
	if host == "" {
		return "*"
	}
	return host
}
