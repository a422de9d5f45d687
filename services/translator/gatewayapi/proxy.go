package gatewayapi

import (
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// proxyFor returns what to run for a gateway: one port per IR listener,
// TCP or UDP, with the port Envoy binds (see [xdsgen.BindPort]), and the
// labels and annotations of spec.infrastructure. Service type, replicas and
// image are left to the infra defaults.
func proxyFor(gw *gatewayv1.Gateway, ir *irv1.Gateway) *busv1.Proxy {
	p := &busv1.Proxy{
		Namespace:   gw.Namespace,
		Name:        gw.Name,
		NodeCluster: xdsgen.NodeCluster(ir),
		GatewayUid:  string(gw.UID),
	}
	if infra := gw.Spec.Infrastructure; infra != nil {
		p.Labels = stringMap(infra.Labels)
		p.Annotations = stringMap(infra.Annotations)
	}
	for _, l := range ir.Listeners {
		protocol := "TCP"
		if l.Protocol == irv1.Protocol_PROTOCOL_UDP {
			protocol = "UDP"
		}
		p.Ports = append(p.Ports, &busv1.ProxyPort{
			Name:          l.Name,
			Protocol:      protocol,
			Port:          l.Port,
			ContainerPort: xdsgen.BindPort(l.Port),
		})
	}
	return p
}

// stringMap copies a map of string types; nil when m is empty.
func stringMap[K, V ~string](m map[K]V) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}
