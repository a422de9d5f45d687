package xds

import (
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// TestSubscriptionGrowsToCoverType subscribes a proxyless client to one
// of the two clusters (and endpoints) of a snapshot, then to both, as
// gRPC-Go does when its channels watch one more cluster, and checks that
// the client is sent both at the same version. A server that takes "the
// client now names every resource of the type" for "the client has
// them" never sends the second, and gRPC-Go reports it removed when its
// watch times out (15 s).
func TestSubscriptionGrowsToCoverType(t *testing.T) {
	h := start(t, bustest.New(t))
	h.put(t, gatewayKey, proxylessSample(t, "v1", "a.example"))
	h.waitVersion(t, gateway, "v1")
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType} {
		s := openADSAs(t, h.conn, proxylessNode(t, gateway), typeURL, "", xdstest.ClusterName)
		if got := names(t, s.recv(t)); !slices.Equal(got, []string{xdstest.ClusterName}) {
			t.Fatalf("%s: %q, want %s", typeURL, got, xdstest.ClusterName)
		}
		s.names = []string{xdstest.ClusterName, "other"}
		s.ack(t)
		resp := s.recv(t)
		if got := names(t, resp); resp.GetVersionInfo() != "v1" || !slices.Equal(got, []string{xdstest.ClusterName, "other"}) {
			t.Errorf("%s after the client named both: %q at %q, want backend and other at v1", typeURL, got, resp.GetVersionInfo())
		}
	}
}
