package translator

import (
	"slices"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/services/translator/gatewayapi"
	"github.com/gatewire/gatewire/services/translator/resources"
	"github.com/gatewire/gatewire/services/translator/xdsgen"
)

// updateEndpoints brings last, the latest translation of a gateway, up to
// date with the EndpointSlices of idx, when nothing else the gateway
// depends on has changed since: it recomputes the endpoints of its Service
// backends and, for those that differ, their ClusterLoadAssignments, and
// keeps the rest. The result equals what [Translate] gives. Only endpoints
// depend on EndpointSlices: not the listeners, routes, clusters, statuses
// or proxy spec.
//
// It updates last in place and returns it. It reports false, with last
// unchanged, when it cannot: last has no snapshot (its configuration was
// invalid), or a backend's Service port is gone; then the gateway needs a
// whole translation.
func updateEndpoints(idx *resources.Index, last *Output) (*Output, bool) {
	if last.XDS == nil {
		return nil, false
	}
	var changed []*irv1.Backend
	var fresh [][]*irv1.Endpoint
	for _, b := range last.IR.GetBackends() {
		if b.GetService() == "" {
			continue
		}
		eps, ok := gatewayapi.BackendEndpoints(idx, b)
		if !ok {
			return nil, false
		}
		if !slices.EqualFunc(eps, b.GetEndpoints(), func(x, y *irv1.Endpoint) bool { return proto.Equal(x, y) }) {
			changed = append(changed, b)
			fresh = append(fresh, eps)
		}
	}
	if len(changed) == 0 {
		return last, true
	}
	clas := make([]*endpointv3.ClusterLoadAssignment, len(changed))
	for i, b := range changed {
		next := proto.CloneOf(b)
		next.Endpoints = fresh[i]
		clas[i] = xdsgen.LoadAssignment(next)
	}
	if err := xdsgen.ReplaceLoadAssignments(last.XDS, clas); err != nil {
		return nil, false
	}
	for i, b := range changed {
		b.Endpoints = fresh[i]
	}
	return last, true
}
