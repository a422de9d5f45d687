package gatewayapi

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// markConflicts flags the listeners that are not distinct, as the Gateway
// API defines it, or that gatewire cannot serve side by side. Listeners
// that are not accepted take no part. Among the listeners of one port and
// transport (UDP ports are apart from the others):
//
//   - a TCP listener next to a listener of another protocol, or an HTTP
//     listener next to an HTTPS or TLS one: all of them have a
//     ProtocolConflict;
//   - listeners with the same hostname (TCP and UDP listeners have none):
//     a HostnameConflict, whether their protocols are the same or not
//     (HTTPS and TLS, which both match on SNI): the spec's reason for
//     listeners of one port that use the same hostname.
//
// No listener of a conflicting set wins: all of them are left out.
func markConflicts(ls []*listener) {
	type portKey struct {
		port gatewayv1.PortNumber
		udp  bool
	}
	byPort := map[portKey][]*listener{}
	var keys []portKey
	for _, l := range ls {
		if l.notAccepted != nil {
			continue
		}
		k := portKey{l.spec.Port, l.proto.udp}
		if byPort[k] == nil {
			keys = append(keys, k)
		}
		byPort[k] = append(byPort[k], l)
	}
	for _, k := range keys {
		group := byPort[k]
		if conflictingProtocols(group) {
			setConflict(group, gatewayv1.ListenerReasonProtocolConflict,
				fmt.Sprintf("listeners %s on port %d have protocols that cannot share a port", quoteJoin(names(group)), k.port))
			continue
		}
		markHostnameConflicts(group, k.port)
	}
}

// markHostnameConflicts flags the listeners of one port that share a
// hostname.
func markHostnameConflicts(group []*listener, port gatewayv1.PortNumber) {
	byHost := map[string][]*listener{}
	var hosts []string
	for _, l := range group {
		if byHost[l.hostname] == nil {
			hosts = append(hosts, l.hostname)
		}
		byHost[l.hostname] = append(byHost[l.hostname], l)
	}
	for _, h := range hosts {
		same := byHost[h]
		if len(same) < 2 {
			continue
		}
		message := fmt.Sprintf("listeners %s on port %d share hostname %q", quoteJoin(names(same)), port, orAny(h))
		if p := same[0].spec.Protocol; p == gatewayv1.TCPProtocolType || p == gatewayv1.UDPProtocolType {
			message = fmt.Sprintf("%s listeners %s share port %d, and nothing else tells them apart", p, quoteJoin(names(same)), port)
		}
		setConflict(same, gatewayv1.ListenerReasonHostnameConflict, message)
	}
}

func setConflict(ls []*listener, reason gatewayv1.ListenerConditionReason, message string) {
	for _, l := range ls {
		l.conflict = &problem{string(reason), message}
	}
}

func names(ls []*listener) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l.spec.Name)
	}
	return out
}

// conflictingProtocols reports whether a group of listeners on one port
// mixes protocols that cannot share it: TCP with anything else, or HTTP
// with HTTPS or TLS.
func conflictingProtocols(group []*listener) bool {
	seen := map[gatewayv1.ProtocolType]bool{}
	for _, l := range group {
		seen[l.spec.Protocol] = true
	}
	tls := seen[gatewayv1.HTTPSProtocolType] || seen[gatewayv1.TLSProtocolType]
	return (seen[gatewayv1.TCPProtocolType] && len(seen) > 1) || (seen[gatewayv1.HTTPProtocolType] && tls)
}
