package resources

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

type referenceGrantKind struct{}

func (referenceGrantKind) group() string { return gatewayv1.GroupName }

func (referenceGrantKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &gatewayv1.ReferenceGrant{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.grants[nn] = obj
	x.grantsByNamespace.set(key(KindReferenceGrant, nn), []string{nn.Namespace})
	return nil
}

func (referenceGrantKind) remove(x *Index, nn types.NamespacedName) {
	delete(x.grants, nn)
	x.grantsByNamespace.set(key(KindReferenceGrant, nn), nil)
}

// affected: a grant in namespace To can change what the gateways and routes
// of its from namespaces may reference in To.
func (referenceGrantKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	g := x.grants[nn]
	if g == nil {
		return
	}
	for _, from := range g.Spec.From {
		if from.Group != gatewayv1.GroupName {
			continue
		}
		for _, src := range x.crossRefs.sources(namespacePair{From: string(from.Namespace), To: nn.Namespace}) {
			if src.Kind == string(from.Kind) {
				objectAffects(x, src, c)
			}
		}
	}
}

type backendTLSPolicyKind struct{}

func (backendTLSPolicyKind) group() string { return gatewayv1.GroupName }

func (backendTLSPolicyKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &gatewayv1.BackendTLSPolicy{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.policies[nn] = obj
	k := key(KindBackendTLSPolicy, nn)
	x.policiesByService.set(k, PolicyServices(obj))
	var configMaps []types.NamespacedName
	for _, ref := range obj.Spec.Validation.CACertificateRefs {
		if ref.Group == "" && ref.Kind == KindConfigMap {
			configMaps = uniq(configMaps, types.NamespacedName{Namespace: nn.Namespace, Name: string(ref.Name)})
		}
	}
	x.configMapsByPolicy.set(k, configMaps)
	return nil
}

func (backendTLSPolicyKind) remove(x *Index, nn types.NamespacedName) {
	delete(x.policies, nn)
	k := key(KindBackendTLSPolicy, nn)
	x.policiesByService.set(k, nil)
	x.configMapsByPolicy.set(k, nil)
}

func (backendTLSPolicyKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	for _, svc := range x.policiesByService.targets(key(KindBackendTLSPolicy, nn)) {
		serviceAffects(x, svc, c)
	}
}

// PolicyServices returns the Services a BackendTLSPolicy targets (in its
// own namespace), without duplicates, in order.
func PolicyServices(p *gatewayv1.BackendTLSPolicy) []types.NamespacedName {
	var out []types.NamespacedName
	for _, ref := range p.Spec.TargetRefs {
		if ref.Group == "" && ref.Kind == KindService {
			out = uniq(out, types.NamespacedName{Namespace: p.Namespace, Name: string(ref.Name)})
		}
	}
	return out
}

type secretKind struct{}

func (secretKind) group() string { return corev1.GroupName }

func (secretKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &corev1.Secret{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.secrets[nn] = obj
	return nil
}

func (secretKind) remove(x *Index, nn types.NamespacedName) { delete(x.secrets, nn) }

func (secretKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	listenerSetSecretAffects(x, nn, c)
	for _, gw := range x.secretsByGateway.sources(nn) {
		c.gateway(gw.NamespacedName)
	}
}

type configMapKind struct{}

func (configMapKind) group() string { return corev1.GroupName }

func (configMapKind) put(x *Index, nn types.NamespacedName, r *busv1.Resource) error {
	obj := &corev1.ConfigMap{}
	if err := decode(r, obj, nn); err != nil {
		return err
	}
	x.configMaps[nn] = obj
	return nil
}

func (configMapKind) remove(x *Index, nn types.NamespacedName) { delete(x.configMaps, nn) }

// affected: a ConfigMap matters through the BackendTLSPolicies that take CA
// certificates from it, and the gateways that validate client certificates
// with it.
func (configMapKind) affected(x *Index, nn types.NamespacedName, c *changeSet) {
	for _, gw := range x.configMapsByGateway.sources(nn) {
		c.gateway(gw.NamespacedName)
	}
	for _, policy := range x.configMapsByPolicy.sources(nn) {
		for _, svc := range x.policiesByService.targets(policy) {
			serviceAffects(x, svc, c)
		}
	}
}
