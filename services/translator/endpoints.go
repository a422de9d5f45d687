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
// backends and, when some differ, their ClusterLoadAssignments and the
// load assignments that combine several backends' endpoints (those of
// weighted UDP routes, see [xdsgen.CombinedLoadAssignments]), and keeps
// the rest. The result equals what [Translate] gives. Only endpoints
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
	backends := last.IR.GetBackends()
	next := backends // the backends with their fresh endpoints, copied on the first change
	var clas []*endpointv3.ClusterLoadAssignment
	for i, b := range backends {
		if b.GetService() == "" {
			continue
		}
		eps, ok := gatewayapi.BackendEndpoints(idx, b)
		if !ok {
			return nil, false
		}
		if slices.EqualFunc(eps, b.GetEndpoints(), func(x, y *irv1.Endpoint) bool { return proto.Equal(x, y) }) {
			continue
		}
		if len(clas) == 0 {
			next = slices.Clone(backends)
		}
		fresh := proto.CloneOf(b)
		fresh.Endpoints = eps
		next[i] = fresh
		clas = append(clas, xdsgen.LoadAssignment(fresh))
	}
	if len(clas) == 0 {
		return last, true
	}
	view := &irv1.Gateway{Listeners: last.IR.GetListeners(), Backends: next}
	clas = append(clas, xdsgen.CombinedLoadAssignments(view)...)
	if err := xdsgen.ReplaceLoadAssignments(last.XDS, clas); err != nil {
		return nil, false
	}
	for i, b := range backends {
		b.Endpoints = next[i].GetEndpoints()
	}
	return last, true
}
