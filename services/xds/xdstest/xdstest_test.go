package xdstest_test

import (
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/services/xds/xdstest"
)

type validator interface{ ValidateAll() error }

// TestSample checks what the package doc promises: every resource of the
// sample, and the typed config inside the listener, passes ValidateAll, and
// the snapshot is consistent.
func TestSample(t *testing.T) {
	x := xdstest.Sample("ns/gw", "v1")
	if x.GetNodeCluster() != "ns/gw" || x.GetVersion() != "v1" {
		t.Fatalf("node cluster %q version %q", x.GetNodeCluster(), x.GetVersion())
	}
	byType := map[resource.Type][]types.Resource{}
	var urls []string
	for _, typed := range x.GetResources() {
		urls = append(urls, typed.GetTypeUrl())
		for _, a := range typed.GetResources() {
			m, err := a.UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			mustValidate(t, m)
			if l, ok := m.(*listener.Listener); ok {
				checkListenerConfig(t, l)
			}
			byType[typed.GetTypeUrl()] = append(byType[typed.GetTypeUrl()], m)
		}
	}
	want := []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType}
	if len(urls) != len(want) {
		t.Fatalf("types %v, want %v", urls, want)
	}
	for i := range want {
		if urls[i] != want[i] {
			t.Fatalf("types %v, want %v", urls, want)
		}
	}
	snap, err := cache.NewSnapshot(x.GetVersion(), byType)
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.Consistent(); err != nil {
		t.Fatal(err)
	}
}

// checkListenerConfig validates the connection manager and router of the
// listener, which ValidateAll does not open.
func checkListenerConfig(t *testing.T, l *listener.Listener) {
	t.Helper()
	manager := &hcm.HttpConnectionManager{}
	if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(manager); err != nil {
		t.Fatal(err)
	}
	mustValidate(t, manager)
	r := &router.Router{}
	if err := manager.GetHttpFilters()[0].GetTypedConfig().UnmarshalTo(r); err != nil {
		t.Fatal(err)
	}
	mustValidate(t, r)
	if manager.GetRds().GetRouteConfigName() != xdstest.RouteName {
		t.Errorf("listener takes route config %q, want %q", manager.GetRds().GetRouteConfigName(), xdstest.RouteName)
	}
}

func mustValidate(t *testing.T, m proto.Message) {
	t.Helper()
	v, ok := m.(validator)
	if !ok {
		t.Fatalf("%T has no ValidateAll", m)
	}
	if err := v.ValidateAll(); err != nil {
		t.Fatalf("%T: %v", m, err)
	}
}

// TestSnapshotSortsByName checks that resources of a type are packed in
// name order, whatever order they are given in.
func TestSnapshotSortsByName(t *testing.T) {
	x, err := xdstest.Snapshot("ns/gw", "v1", xdstest.Cluster("b"), xdstest.Cluster("a"), xdstest.Cluster("c"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range x.GetResources()[0].GetResources() {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, cache.GetResourceName(m))
	}
	if len(names) != 3 || names[0] != "a" || names[1] != "b" || names[2] != "c" {
		t.Errorf("names %v, want [a b c]", names)
	}
}
