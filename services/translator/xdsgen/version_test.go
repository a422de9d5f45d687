package xdsgen

import (
	"maps"
	"testing"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestTypeVersions changes the resources of one type at a time and checks
// which types get a new version: the changed one, endpoints with clusters
// and route configurations with listeners, and no other.
func TestTypeVersions(t *testing.T) {
	for _, tc := range []struct {
		changed string
		want    []string
	}{
		{resourcev3.RouteType, []string{resourcev3.RouteType}},
		{resourcev3.EndpointType, []string{resourcev3.EndpointType}},
		{resourcev3.ListenerType, []string{resourcev3.ListenerType, resourcev3.RouteType}},
		{resourcev3.ClusterType, []string{resourcev3.ClusterType, resourcev3.EndpointType}},
	} {
		t.Run(shortType(tc.changed), func(t *testing.T) {
			snap, err := Snapshot(gateway("default/web/80"))
			if err != nil {
				t.Fatal(err)
			}
			before, version := typeVersions(snap), snap.GetVersion()
			if len(before) != 4 {
				t.Fatalf("versions of %d types, want 4: %v", len(before), before)
			}
			for _, typed := range snap.GetResources() {
				if typed.GetTypeUrl() == tc.changed {
					a := typed.GetResources()[0]
					a.Value = protowire.AppendVarint(protowire.AppendTag(a.Value, 999, protowire.VarintType), 1)
				}
			}
			stamp(snap)
			if snap.GetVersion() == version {
				t.Errorf("the snapshot's version %s did not change", version)
			}
			after := typeVersions(snap)
			var changed []string
			for _, typeURL := range []string{resourcev3.ClusterType, resourcev3.EndpointType, resourcev3.ListenerType, resourcev3.RouteType} {
				if after[typeURL] == "" {
					t.Errorf("%s has no version", shortType(typeURL))
				}
				if after[typeURL] != before[typeURL] {
					changed = append(changed, typeURL)
				}
			}
			if !maps.Equal(setOf(changed), setOf(tc.want)) {
				t.Errorf("new versions for %v, want %v", changed, tc.want)
			}
		})
	}
}

func typeVersions(snap *busv1.XdsSnapshot) map[string]string {
	out := map[string]string{}
	for _, typed := range snap.GetResources() {
		out[typed.GetTypeUrl()] = typed.GetVersion()
	}
	return out
}

func setOf(list []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range list {
		out[s] = true
	}
	return out
}
