package xdsgen

import (
	"net"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// LoadAssignment returns the endpoints of an IR backend for its cluster:
// the ready ones, in IR order, each address and port once, in one locality.
// The locality is named (empty, but set) and weighted 1, and no address is
// listed twice: gRPC's xDS client rejects a load assignment with a locality
// that has no name or an address listed twice, and ignores a locality of
// weight 0. Envoy ignores the weight, as the cluster does not weight
// localities. A backend that must not be reached (TLS with no CA to trust,
// see [Cluster]) has no endpoints: requests to it fail with 503.
func LoadAssignment(b *irv1.Backend) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: b.GetName()}
	if refused(b) {
		return cla
	}
	lbs := make([]*endpointv3.LbEndpoint, 0, len(b.GetEndpoints()))
	seen := make(map[string]bool, len(b.GetEndpoints()))
	for _, e := range b.GetEndpoints() {
		key := net.JoinHostPort(e.GetAddress(), strconv.FormatUint(uint64(e.GetPort()), 10))
		if !e.GetReady() || seen[key] {
			continue
		}
		seen[key] = true
		lbs = append(lbs, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(e.GetAddress(), e.GetPort()),
			}},
		})
	}
	if len(lbs) > 0 {
		cla.Endpoints = []*endpointv3.LocalityLbEndpoints{{
			Locality:            &corev3.Locality{},
			LoadBalancingWeight: wrapperspb.UInt32(1),
			LbEndpoints:         lbs,
		}}
	}
	return cla
}
