package xdsgen

import (
	"fmt"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// ReplaceLoadAssignments puts clas in place of the ClusterLoadAssignments
// of the same names in snap, a snapshot made by [Snapshot], and gives snap
// the version Snapshot would give the result. It is how the translator
// follows a change of endpoints without building the rest again: nothing
// else in a snapshot depends on them. Each load assignment must pass
// ValidateAll and replace one snap holds; otherwise ReplaceLoadAssignments
// fails with an error wrapping [ErrInvalid] and leaves snap unchanged.
func ReplaceLoadAssignments(snap *busv1.XdsSnapshot, clas []*endpointv3.ClusterLoadAssignment) error {
	var typed *busv1.TypedResources
	for _, t := range snap.GetResources() {
		if t.GetTypeUrl() == resourcev3.EndpointType {
			typed = t
		}
	}
	index := map[string]int{}
	for i, a := range typed.GetResources() {
		name, err := xdsbucket.FieldOne(a.GetValue())
		if err != nil {
			return fmt.Errorf("%w: load assignment %d of the snapshot: %v", ErrInvalid, i, err)
		}
		index[name] = i
	}
	packed := make(map[int]*anypb.Any, len(clas))
	opts := proto.MarshalOptions{Deterministic: true}
	for _, cla := range clas {
		i, ok := index[cla.GetClusterName()]
		if !ok {
			return fmt.Errorf("%w: the snapshot has no load assignment %s to replace", ErrInvalid, cla.GetClusterName())
		}
		if err := cla.ValidateAll(); err != nil {
			return fmt.Errorf("%w: ClusterLoadAssignment %s: %v", ErrInvalid, cla.GetClusterName(), err)
		}
		a := &anypb.Any{}
		if err := anypb.MarshalFrom(a, cla, opts); err != nil {
			return fmt.Errorf("%w: marshal ClusterLoadAssignment %s: %v", ErrInvalid, cla.GetClusterName(), err)
		}
		packed[i] = a
	}
	for i, a := range packed {
		typed.Resources[i] = a
		if i < len(typed.ResourceVersions) {
			typed.ResourceVersions[i] = xdsbucket.Version(a.GetValue())
		}
	}
	return stamp(snap)
}
