package xdsgen

import (
	"fmt"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// stamp gives a packed snapshot the versions of its commit on the bus
// (see package xdsbucket): each type's version is a hash of the digests
// of its resources, and of the resources of the type it is sent with, so
// that the xds service sends a type again only when it changed or must be
// resent (a route edit sends one route configuration, not every cluster
// and endpoint again); the snapshot's version is a hash of the types'.
func stamp(snap *busv1.XdsSnapshot) error {
	set, err := xdsbucket.Split(snap)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	commit := set.Commit(snap.GetNodeCluster(), 0)
	versions := map[string]string{}
	for _, t := range commit.GetResources() {
		versions[t.GetTypeUrl()] = t.GetVersion()
	}
	for _, t := range snap.GetResources() {
		t.Version = versions[t.GetTypeUrl()]
	}
	snap.Version = commit.GetVersion()
	return nil
}
