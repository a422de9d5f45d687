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

// httpBackends translates the backendRefs of a rule in namespace ns into
// weighted backends, merging references to the same backend. The share of
// references that cannot be resolved is one entry with an empty backend name
// (invalidShare). used lists the resolved backends. The first problem is
// recorded in out.
func (t *translation) httpBackends(ns string, refs []gatewayv1.HTTPBackendRef, out *httpRules) (weighted []*irv1.WeightedBackend, used []*irv1.Backend, invalidShare bool) {
	for _, ref := range refs {
		b, p := t.resolveBackend(ns, ref.BackendRef)
		if p != nil && out.unresolved == nil {
			out.unresolved = p
		}
		weight := uint32(1)
		if ref.Weight != nil {
			weight = uint32(max(*ref.Weight, 0))
		}
		if weight == 0 {
			continue
		}
		name := ""
		if p == nil {
			name = b.Name
		}
		if i := slices.IndexFunc(weighted, func(w *irv1.WeightedBackend) bool { return w.Backend == name }); i >= 0 {
			weighted[i].Weight += weight
			continue
		}
		weighted = append(weighted, &irv1.WeightedBackend{Backend: name, Weight: weight})
		if p == nil {
			used = append(used, b)
		} else {
			invalidShare = true
		}
	}
	return weighted, used, invalidShare
}

// resolveBackend resolves a backendRef from namespace ns to a Backend, or
// says why it cannot be resolved. Results are kept for the translation.
func (t *translation) resolveBackend(ns string, ref gatewayv1.BackendRef) (*irv1.Backend, *problem) {
	svc := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, ns), Name: string(ref.Name)}
	if !resources.IsServiceRef(ref.Group, ref.Kind) {
		return nil, &problem{string(gatewayv1.RouteReasonInvalidKind),
			fmt.Sprintf("backendRef %s: kind %s is not supported", svc.Name, groupKind(ref.Group, ref.Kind))}
	}
	if svc.Namespace != ns {
		return nil, &problem{string(gatewayv1.RouteReasonRefNotPermitted),
			fmt.Sprintf("backendRef to Service %s: references to other namespaces are not supported yet", svc)}
	}
	if ref.Port == nil {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound),
			fmt.Sprintf("backendRef to Service %s: port is required", svc)}
	}
	name := fmt.Sprintf("%s/%s/%d", svc.Namespace, svc.Name, *ref.Port)
	if r, ok := t.resolved[name]; ok {
		return r.backend, r.problem
	}
	b, p := t.lookupBackend(svc, uint32(*ref.Port), name)
	t.resolved[name] = resolved{b, p}
	return b, p
}

func (t *translation) lookupBackend(svc types.NamespacedName, port uint32, name string) (*irv1.Backend, *problem) {
	s := t.idx.Service(svc)
	if s == nil {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s not found", svc)}
	}
	i := slices.IndexFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return uint32(p.Port) == port })
	if i < 0 {
		return nil, &problem{string(gatewayv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s has no port %d", svc, port)}
	}
	return &irv1.Backend{
		Name:      name,
		Namespace: svc.Namespace,
		Service:   svc.Name,
		Port:      port,
		Endpoints: endpoints(t.idx.EndpointSlicesFor(svc), s.Spec.Ports[i].Name),
	}, nil
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
// unnamed Service port).
func slicePort(ports []discoveryv1.EndpointPort, name string) (uint32, bool) {
	for _, p := range ports {
		pn := ""
		if p.Name != nil {
			pn = *p.Name
		}
		if pn == name && p.Port != nil {
			return uint32(*p.Port), true
		}
	}
	return 0, false
}
