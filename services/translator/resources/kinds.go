package resources

import (
	"encoding/json"
	"fmt"
	"slices"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// kind is how the index stores and relates one kind of object. Adding a kind
// is one more entry in [kinds].
type kind interface {
	// group is the API group the kind must come from.
	group() string
	// put decodes r and stores it under nn, replacing any previous object.
	// On error the index is unchanged.
	put(x *Index, nn types.NamespacedName, r *busv1.Resource) error
	remove(x *Index, nn types.NamespacedName)
	// affected adds to c what depends on the object stored under nn.
	affected(x *Index, nn types.NamespacedName, c *changeSet)
}

// kinds lists every kind the index holds, by the kind of resource keys.
var kinds = map[string]kind{
	KindGatewayClass:     gatewayClassKind{},
	KindGateway:          gatewayKind{},
	KindHTTPRoute:        httpRouteKind,
	KindGRPCRoute:        grpcRouteKind,
	KindTLSRoute:         tlsRouteKind,
	KindTCPRoute:         tcpRouteKind,
	KindUDPRoute:         udpRouteKind,
	KindReferenceGrant:   referenceGrantKind{},
	KindBackendTLSPolicy: backendTLSPolicyKind{},
	KindService:          serviceKind{},
	KindEndpointSlice:    endpointSliceKind{},
	KindNamespace:        namespaceKind{},
	KindSecret:           secretKind{},
	KindConfigMap:        configMapKind{},
	KindListenerSet:      listenerSetKind{},
}

// decode unmarshals r.Object into obj and makes its identity that of the
// resource key, which is what Remove will name.
func decode(r *busv1.Resource, obj metav1.Object, nn types.NamespacedName) error {
	if err := json.Unmarshal(r.GetObject(), obj); err != nil {
		return fmt.Errorf("decode object: %w", err)
	}
	obj.SetNamespace(nn.Namespace)
	obj.SetName(nn.Name)
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(r.GetGeneration())
	}
	if obj.GetUID() == "" {
		obj.SetUID(types.UID(r.GetUid()))
	}
	return nil
}

// objectAffects adds the gateways that a Gateway or a route is part of.
func objectAffects(x *Index, k ObjectKey, c *changeSet) {
	listenerSetAffects(x, k, c)
	if k.Kind == KindGateway {
		c.gateway(k.NamespacedName)
		return
	}
	for _, gw := range x.routesByGateway.targets(k) {
		c.gateway(gw)
	}
}

type gatewayClassKind struct{}

func (gatewayClassKind) group() string { return gatewayv1.GroupName }

func (gatewayClassKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &gatewayv1.GatewayClass{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.classes[nn.Name] = obj
	return nil
}

func (gatewayClassKind) remove(x *Index, nn types.NamespacedName) { delete(x.classes, nn.Name) }

func (gatewayClassKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	c.class(nn.Name)
	for _, gw := range x.gatewaysByClass.sources(nn.Name) {
		c.gateway(gw.NamespacedName)
	}
}

type gatewayKind struct{}

func (gatewayKind) group() string { return gatewayv1.GroupName }

func (gatewayKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &gatewayv1.Gateway{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	k := key(KindGateway, nn)
	x.gateways[nn] = obj
	x.gatewaysByClass.set(k, []string{string(obj.Spec.GatewayClassName)})
	secrets, configMaps := CertificateSecrets(obj), FrontendConfigMaps(obj)
	x.secretsByGateway.set(k, secrets)
	x.configMapsByGateway.set(k, configMaps)
	x.crossRefs.set(k, crossNamespace(nn.Namespace, append(slices.Clip(secrets), configMaps...)))
	return nil
}

func (gatewayKind) remove(x *Index, nn types.NamespacedName) {
	k := key(KindGateway, nn)
	delete(x.gateways, nn)
	x.gatewaysByClass.set(k, nil)
	x.secretsByGateway.set(k, nil)
	x.configMapsByGateway.set(k, nil)
	x.crossRefs.set(k, nil)
}

func (gatewayKind) affected(_ *Index, nn types.NamespacedName, c *changeSet) { c.gateway(nn) }

// CertificateSecrets returns the Secrets gw references as certificates:
// those of its listeners and the client certificate it presents to
// backends, without duplicates, in order.
func CertificateSecrets(gw *gatewayv1.Gateway) []types.NamespacedName {
	var out []types.NamespacedName
	add := func(ref gatewayv1.SecretObjectReference) {
		if IsSecretRef(ref.Group, ref.Kind) {
			out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, gw.Namespace), Name: string(ref.Name)})
		}
	}
	for _, l := range gw.Spec.Listeners {
		if l.TLS != nil {
			for _, ref := range l.TLS.CertificateRefs {
				add(ref)
			}
		}
	}
	if tls := gw.Spec.TLS; tls != nil && tls.Backend != nil && tls.Backend.ClientCertificateRef != nil {
		add(*tls.Backend.ClientCertificateRef)
	}
	return out
}

// FrontendConfigMaps returns the ConfigMaps gw takes the CA certificates
// of client certificate validation from (spec.tls.frontend), without
// duplicates, in order.
func FrontendConfigMaps(gw *gatewayv1.Gateway) []types.NamespacedName {
	tls := gw.Spec.TLS
	if tls == nil || tls.Frontend == nil {
		return nil
	}
	configs := []gatewayv1.TLSConfig{tls.Frontend.Default}
	for _, p := range tls.Frontend.PerPort {
		configs = append(configs, p.TLS)
	}
	var out []types.NamespacedName
	for _, c := range configs {
		if c.Validation == nil {
			continue
		}
		for _, ref := range c.Validation.CACertificateRefs {
			if ref.Group == "" && ref.Kind == KindConfigMap {
				out = uniq(out, types.NamespacedName{Namespace: NamespaceOr(ref.Namespace, gw.Namespace), Name: string(ref.Name)})
			}
		}
	}
	return out
}

// crossNamespace returns the namespace pairs of the references from
// namespace ns to targets in other namespaces.
func crossNamespace(ns string, targets []types.NamespacedName) []namespacePair {
	var out []namespacePair
	for _, t := range targets {
		if t.Namespace != ns {
			out = uniq(out, namespacePair{From: ns, To: t.Namespace})
		}
	}
	return out
}

type serviceKind struct{}

func (serviceKind) group() string { return corev1.GroupName }

func (serviceKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &corev1.Service{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.services[nn] = obj
	return nil
}

func (serviceKind) remove(x *Index, nn types.NamespacedName) { delete(x.services, nn) }

func (serviceKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	serviceAffects(x, nn, c)
}

// serviceAffects adds the gateways of the routes that send traffic to svc.
func serviceAffects(x *Index, svc types.NamespacedName, c *changeSet) {
	for _, route := range x.routesByService.sources(svc) {
		objectAffects(x, route, c)
	}
}

type endpointSliceKind struct{}

func (endpointSliceKind) group() string { return discoveryv1.GroupName }

func (endpointSliceKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &discoveryv1.EndpointSlice{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	var services []types.NamespacedName
	if svc := obj.Labels[discoveryv1.LabelServiceName]; svc != "" {
		services = []types.NamespacedName{{Namespace: nn.Namespace, Name: svc}}
	}
	x.endpointSlices[nn] = compactSlice(obj)
	x.slicesByService.set(key(KindEndpointSlice, nn), services)
	return nil
}

// compactSlice returns what the translation reads of s, its identity, its
// address type, its ports and its endpoints' addresses and readiness, in
// slices of their exact length. EndpointSlices are the most numerous
// objects of a gateway (two per route in the benchmarks), and decoded whole
// each holds about 1.8 KB, most of it in fields nothing reads (labels,
// topology, the other conditions) and in the spare capacity of decoding.
func compactSlice(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{AddressType: s.AddressType, Ports: slices.Clip(s.Ports)}
	out.Namespace, out.Name, out.Generation, out.UID = s.Namespace, s.Name, s.Generation, s.UID
	out.Endpoints = make([]discoveryv1.Endpoint, len(s.Endpoints))
	for i, ep := range s.Endpoints {
		out.Endpoints[i] = discoveryv1.Endpoint{
			Addresses:  slices.Clip(ep.Addresses),
			Conditions: discoveryv1.EndpointConditions{Ready: ep.Conditions.Ready},
		}
	}
	return out
}

func (endpointSliceKind) remove(x *Index, nn types.NamespacedName) {
	delete(x.endpointSlices, nn)
	x.slicesByService.set(key(KindEndpointSlice, nn), nil)
}

func (endpointSliceKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	for _, svc := range x.slicesByService.targets(key(KindEndpointSlice, nn)) {
		serviceAffects(x, svc, c)
	}
}

type namespaceKind struct{}

func (namespaceKind) group() string { return corev1.GroupName }

func (namespaceKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &corev1.Namespace{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.namespaces[nn.Name] = obj
	return nil
}

func (namespaceKind) remove(x *Index, nn types.NamespacedName) { delete(x.namespaces, nn.Name) }

// affected: a namespace's labels decide which routes listeners with a
// namespace selector admit, so every gateway may change.
func (namespaceKind) affected(x *Index, _ types.NamespacedName, c *changeSet) {
	for gw := range x.gateways {
		c.gateway(gw)
	}
}
