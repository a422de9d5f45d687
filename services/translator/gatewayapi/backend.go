package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// resolved is the outcome of resolving one backend name.
type resolved struct {
	backend *irv1.Backend
	problem *problem
}

// backendUse is how routes of one kind talk to their backends.
type backendUse struct {
	// protocol is the Service port protocol the backend must use.
	protocol corev1.Protocol
	// suffix ends the backend name: L4 backends are kept apart from HTTP
	// ones, as a BackendTLSPolicy applies to HTTP backends only.
	suffix string
	// backend is the backend protocol, or unspecified to take it from the
	// Service port's appProtocol (HTTP/1.1 unless it says h2c or grpc).
	backend irv1.BackendProtocol
}

// backendUses are the backend uses by route kind.
var backendUses = map[string]backendUse{
	resources.KindHTTPRoute: {protocol: corev1.ProtocolTCP},
	resources.KindGRPCRoute: {protocol: corev1.ProtocolTCP, backend: irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2},
	resources.KindTLSRoute:  {protocol: corev1.ProtocolTCP, suffix: "/tcp", backend: irv1.BackendProtocol_BACKEND_PROTOCOL_TCP},
	resources.KindTCPRoute:  {protocol: corev1.ProtocolTCP, suffix: "/tcp", backend: irv1.BackendProtocol_BACKEND_PROTOCOL_TCP},
	resources.KindUDPRoute:  {protocol: corev1.ProtocolUDP, suffix: "/udp", backend: irv1.BackendProtocol_BACKEND_PROTOCOL_UDP},
}

// terminatedTLS is how TLSRoutes on a listener that terminates TLS use
// their backends: bytes over TCP, which a BackendTLSPolicy may encrypt
// again, so their backends are kept apart from passthrough ones.
var terminatedTLS = backendUse{protocol: corev1.ProtocolTCP, suffix: "/tls", backend: irv1.BackendProtocol_BACKEND_PROTOCOL_TCP}

// routeFrom names the route kind kind in namespace ns as the source of a
// reference.
func routeFrom(kind, ns string) Reference {
	return Reference{Group: gatewayv1.GroupName, Kind: kind, Namespace: ns}
}

// resolveBackendFrom resolves a reference to a backend, written in a route
// (from: its group, kind and namespace), to a Backend, or says why it
// cannot be resolved: another kind than Service (InvalidKind), a Service in
// another namespace that no ReferenceGrant allows (RefNotPermitted), no such
// Service or port (BackendNotFound). Results are kept for the translation;
// a backend that any GRPCRoute uses speaks HTTP/2 for every route.
func (t *routeBuilder) resolveBackendFrom(from Reference, ref gatewayv1.BackendObjectReference) (*irv1.Backend, *problem) {
	return t.resolveBackendAs(from, ref, backendUses[from.Kind])
}

// resolveBackendAs is resolveBackendFrom for a given use of the backend.
func (t *routeBuilder) resolveBackendAs(from Reference, ref gatewayv1.BackendObjectReference, use backendUse) (*irv1.Backend, *problem) {
	svc := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, from.Namespace), Name: string(ref.Name)}
	if !resources.IsServiceRef(ref.Group, ref.Kind) {
		return nil, &problem{string(gatewayv1.RouteReasonInvalidKind),
			fmt.Sprintf("backendRef %s: kind %s is not supported", svc.Name, groupKind(ref.Group, ref.Kind))}
	}
	if !t.allowed(from, Reference{Kind: resources.KindService, Namespace: svc.Namespace, Name: svc.Name}) {
		return nil, &problem{string(gatewayv1.RouteReasonRefNotPermitted),
			fmt.Sprintf("backendRef to Service %s: no ReferenceGrant in namespace %q allows it", svc, svc.Namespace)}
	}
	if ref.Port == nil {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound),
			fmt.Sprintf("backendRef to Service %s: port is required", svc)}
	}
	name := fmt.Sprintf("%s/%s/%d%s", svc.Namespace, svc.Name, *ref.Port, use.suffix)
	r, ok := t.resolved[name]
	if !ok {
		r.backend, r.problem = t.lookupBackend(svc, uint32(*ref.Port), name, use)
		t.resolved[name] = r
	}
	if r.backend != nil && use.backend == irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2 {
		r.backend.Protocol = use.backend
	}
	return r.backend, r.problem
}

func (t *routeBuilder) lookupBackend(svc types.NamespacedName, port uint32, name string, use backendUse) (*irv1.Backend, *problem) {
	s := t.idx.Service(svc)
	if s == nil {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s not found", svc)}
	}
	i := slices.IndexFunc(s.Spec.Ports, func(p corev1.ServicePort) bool {
		return uint32(p.Port) == port && cmp.Or(p.Protocol, corev1.ProtocolTCP) == use.protocol
	})
	if i < 0 {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound),
			fmt.Sprintf("Service %s has no %s port %d", svc, use.protocol, port)}
	}
	protocol := use.backend
	if protocol == irv1.BackendProtocol_BACKEND_PROTOCOL_UNSPECIFIED {
		protocol = appProtocol(s.Spec.Ports[i].AppProtocol)
	}
	return &irv1.Backend{
		Name:      name,
		Namespace: svc.Namespace,
		Service:   svc.Name,
		Port:      port,
		Endpoints: endpoints(t.idx.EndpointSlicesFor(svc), s.Spec.Ports[i].Name),
		Protocol:  protocol,
	}, nil
}

// appProtocol returns the protocol an HTTP backend speaks according to its
// Service port's appProtocol: HTTP/2 without TLS for kubernetes.io/h2c (and
// for h2c and grpc, which some charts use), HTTP/1.1 otherwise (including
// kubernetes.io/ws, WebSocket over HTTP/1.1).
func appProtocol(p *string) irv1.BackendProtocol {
	if p != nil {
		switch *p {
		case "kubernetes.io/h2c", "h2c", "grpc":
			return irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2
		}
	}
	return irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP1
}

func groupKind(group *gatewayv1.Group, kind *gatewayv1.Kind) string {
	g, k := "core", resources.KindService
	if group != nil && *group != "" {
		g = string(*group)
	}
	if kind != nil {
		k = string(*kind)
	}
	return k + "." + g
}

// endpoints returns the addresses of slices on the port named portName (the
// Service port's name), each once, sorted by address then port. An address
// is ready when any slice says so (a nil ready condition means ready).
// Slices of FQDNs are left out: endpoints are IP addresses.
func endpoints(epSlices []*discoveryv1.EndpointSlice, portName string) []*irv1.Endpoint {
	type key struct {
		address string
		port    uint32
	}
	var out []*irv1.Endpoint
	index := map[key]*irv1.Endpoint{}
	for _, s := range epSlices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		port, ok := slicePort(s.Ports, portName)
		if !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			for _, addr := range ep.Addresses {
				k := key{addr, port}
				if e := index[k]; e != nil {
					e.Ready = e.Ready || ready
					continue
				}
				e := &irv1.Endpoint{Address: addr, Port: port, Ready: ready}
				index[k] = e
				out = append(out, e)
			}
		}
	}
	sortEndpoints(out)
	return out
}

func sortEndpoints(eps []*irv1.Endpoint) {
	slices.SortFunc(eps, func(a, b *irv1.Endpoint) int {
		return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
	})
}

// slicePort returns the port number of the slice port named name ("" for an
// unnamed Service port). A port that is not between 1 and 65535 (which
// only a slice that skipped API validation has) is no port.
func slicePort(ports []discoveryv1.EndpointPort, name string) (uint32, bool) {
	for _, p := range ports {
		pn := ""
		if p.Name != nil {
			pn = *p.Name
		}
		if pn == name && p.Port != nil && *p.Port >= 1 && *p.Port <= 65535 {
			return uint32(*p.Port), true
		}
	}
	return 0, false
}
