package kube

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// servicePort is one port of a gateway: the Service port and the container
// port Envoy binds behind it.
type servicePort struct {
	name     string // <protocol>-<port>, a valid Service and container port name
	protocol corev1.Protocol
	port     int32 // the Service port
	target   int32 // the container port
}

// readinessPortName names the container port of the readiness listener.
const readinessPortName = "readiness"

// servicePorts checks the ports of a proxy and returns them sorted by port
// and protocol. An empty protocol is TCP; a container port of 0 is the port.
// The ports Envoy keeps for itself (admin, readiness) are refused.
func servicePorts(ports []*busv1.ProxyPort, reserved ...uint32) ([]servicePort, error) {
	out := make([]servicePort, 0, len(ports))
	seen := map[string]bool{}
	for _, p := range ports {
		sp, err := servicePortOf(p)
		if err != nil {
			return nil, err
		}
		if seen[sp.name] {
			return nil, fmt.Errorf("port %d/%s: %w: listed twice", sp.port, sp.protocol, ErrInvalid)
		}
		seen[sp.name] = true
		if slices.Contains(reserved, uint32(sp.target)) {
			return nil, fmt.Errorf("port %d/%s: %w: container port %d is Envoy's admin or readiness port",
				sp.port, sp.protocol, ErrInvalid, sp.target)
		}
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b servicePort) int {
		return cmp.Or(cmp.Compare(a.port, b.port), strings.Compare(string(a.protocol), string(b.protocol)))
	})
	return out, nil
}

func servicePortOf(p *busv1.ProxyPort) (servicePort, error) {
	protocol := corev1.Protocol(p.GetProtocol())
	switch protocol {
	case "":
		protocol = corev1.ProtocolTCP
	case corev1.ProtocolTCP, corev1.ProtocolUDP:
	default:
		return servicePort{}, fmt.Errorf("port %q (%d): %w: protocol %q: want TCP or UDP",
			p.GetName(), p.GetPort(), ErrInvalid, p.GetProtocol())
	}
	port, target := p.GetPort(), p.GetContainerPort()
	if target == 0 {
		target = port
	}
	if port == 0 || port > 65535 || target > 65535 {
		return servicePort{}, fmt.Errorf("port %q: %w: %d (container port %d): want 1-65535",
			p.GetName(), ErrInvalid, port, target)
	}
	return servicePort{
		name:     fmt.Sprintf("%s-%d", strings.ToLower(string(protocol)), port),
		protocol: protocol,
		port:     int32(port),
		target:   int32(target),
	}, nil
}
