package xdsgen

import (
	"slices"

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
	seen := newEndpointSet(len(b.GetEndpoints()))
	for _, e := range b.GetEndpoints() {
		if !e.GetReady() || !seen.add(e) {
			continue
		}
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

// endpointSet is the addresses and ports of a load assignment so far. A
// backend has few endpoints as a rule, and looking through them costs
// less than a map; past smallEndpoints it keeps a map.
type endpointSet struct {
	list []endpointKey
	big  map[endpointKey]struct{}
}

type endpointKey struct {
	address string
	port    uint32
}

const smallEndpoints = 16

func newEndpointSet(n int) *endpointSet {
	if n > smallEndpoints {
		return &endpointSet{big: make(map[endpointKey]struct{}, n)}
	}
	return &endpointSet{list: make([]endpointKey, 0, n)}
}

// add adds e's address and port, and reports whether they were new.
func (s *endpointSet) add(e *irv1.Endpoint) bool {
	k := endpointKey{e.GetAddress(), e.GetPort()}
	if s.big != nil {
		if _, ok := s.big[k]; ok {
			return false
		}
		s.big[k] = struct{}{}
		return true
	}
	if slices.Contains(s.list, k) {
		return false
	}
	s.list = append(s.list, k)
	return true
}
