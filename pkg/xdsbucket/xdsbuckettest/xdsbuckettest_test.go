package xdsbuckettest_test

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	"github.com/gatewire/gatewire/pkg/xdsbucket/xdsbuckettest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// named marshals a message of a name (field 1) and messages in field 2,
// as a RouteConfiguration with virtual hosts is.
func named(name string, children ...[]byte) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	for _, c := range children {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, c)
	}
	return b
}

// TestPublishReadsBack publishes a snapshot with a route configuration of
// two virtual hosts and a cluster, and checks that xdsbucket.Read gives
// it back byte for byte.
func TestPublishReadsBack(t *testing.T) {
	b := bustest.New(t)
	rc := named("http-80", named("a.example.com"), named("b.example.com"))
	snap := &busv1.XdsSnapshot{NodeCluster: "default/gw", SourceRevision: 3, Resources: []*busv1.TypedResources{
		{TypeUrl: xdsbucket.ClusterType, Resources: []*anypb.Any{{TypeUrl: xdsbucket.ClusterType, Value: named("default/web/80")}}},
		{TypeUrl: xdsbucket.RouteType, Resources: []*anypb.Any{{TypeUrl: xdsbucket.RouteType, Value: rc}}},
	}}
	commit := xdsbuckettest.Publish(t, b, bus.GatewayKey("default", "gw"), snap)
	got, err := xdsbucket.Read(context.Background(), b, bus.GatewayKey("default", "gw"))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetVersion() != commit.GetVersion() || got.GetSourceRevision() != 3 || len(got.GetResources()) != 2 {
		t.Fatalf("read %v, want two types of commit %s", got, commit.GetVersion())
	}
	for _, typed := range got.GetResources() {
		if typed.GetTypeUrl() != xdsbucket.RouteType {
			continue
		}
		if n := len(typed.GetResources()); n != 1 || !bytes.Equal(typed.GetResources()[0].GetValue(), rc) {
			t.Fatalf("route configurations read back: %v, want the one written, whole", typed.GetResources())
		}
	}
}
