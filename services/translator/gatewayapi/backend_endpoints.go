package gatewayapi

import (
	"cmp"
	"slices"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// BackendEndpoints returns the endpoints [Translate] would give b, a
// Service backend of an earlier translation, from the EndpointSlices of idx
// now. It lets the translator follow an EndpointSlice change without
// translating the gateway again. It returns false when b's Service no
// longer has the port b was resolved to: then only a whole translation can
// tell what b becomes.
func BackendEndpoints(idx *resources.Index, b *irv1.Backend) ([]*irv1.Endpoint, bool) {
	svc := types.NamespacedName{Namespace: b.GetNamespace(), Name: b.GetService()}
	s := idx.Service(svc)
	if s == nil {
		return nil, false
	}
	protocol := corev1.ProtocolTCP
	if b.GetProtocol() == irv1.BackendProtocol_BACKEND_PROTOCOL_UDP {
		protocol = corev1.ProtocolUDP
	}
	i := slices.IndexFunc(s.Spec.Ports, func(p corev1.ServicePort) bool {
		return uint32(p.Port) == b.GetPort() && cmp.Or(p.Protocol, corev1.ProtocolTCP) == protocol
	})
	if i < 0 {
		return nil, false
	}
	return endpoints(idx.EndpointSlicesFor(svc), s.Spec.Ports[i].Name), true
}
