package xdsgen

import (
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// LoadAssignment returns the endpoints of an IR backend for its cluster:
// the ready ones, in IR order, in one locality.
func LoadAssignment(b *irv1.Backend) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: b.GetName()}
	lbs := make([]*endpointv3.LbEndpoint, 0, len(b.GetEndpoints()))
	for _, e := range b.GetEndpoints() {
		if !e.GetReady() {
			continue
		}
		lbs = append(lbs, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(e.GetAddress(), e.GetPort()),
			}},
		})
	}
	if len(lbs) > 0 {
		cla.Endpoints = []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}}
	}
	return cla
}
